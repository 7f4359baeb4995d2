// carecircle app pages: finish a sign-in, copy buttons (keys, configurations, inbox addresses),
// the browser's time zone, and loading the notifications opt-in on Settings. Pages work without it
// (copy buttons stay hidden, the text stays selectable) except for the sign-in callback, which must
// read the token from the URL fragment.
(function () {
  'use strict';

  async function finishSignIn(el) {
    var params = new URLSearchParams(location.hash.slice(1));
    var token = params.get('id_token');
    history.replaceState(null, '', location.pathname + location.search);
    // The server chose data-next with this same rule; the page checks it again before following
    // it, so nothing the browser reads here can send anyone off the app or the site.
    var next = '/';
    try {
      var rule = await import('/assets/return-target.js');
      next = rule.returnTarget(el.getAttribute('data-next'), location.origin, [el.getAttribute('data-also') || location.origin]) || '/';
    } catch {
      // The rule did not load: home is always a safe place to land.
    }
    if (!token) {
      el.textContent = 'The sign-in did not return a token. Please try again.';
      return;
    }
    var res = await fetch('/api/auth/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ idToken: token }),
      credentials: 'same-origin',
    });
    var body = await res.json().catch(function () {
      return {};
    });
    if (res.ok && body.authenticated) {
      location.replace(next);
    } else {
      el.textContent = (body && body.message) || 'Sign-in failed. Please try again.';
    }
  }

  function wireCopy(button) {
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener('click', function () {
      var target = document.getElementById(button.getAttribute('data-copy'));
      if (!target) return;
      navigator.clipboard.writeText(target.textContent.trim()).then(
        function () {
          button.textContent = 'Copied';
          window.setTimeout(function () {
            button.textContent = label;
          }, 2000);
        },
        function () {
          button.textContent = button.getAttribute('data-copy-fallback') || 'Select the text and copy it';
        },
      );
    });
  }

  // A person's first pages carry a hidden form: the browser's zone becomes theirs until they choose one.
  function sendZone(form) {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!zone) return;
    form.elements.timeZone.value = zone;
    fetch(form.getAttribute('action'), {
      method: 'POST',
      credentials: 'same-origin',
      body: new URLSearchParams(new window.FormData(form)),
      redirect: 'manual',
    }).catch(function () {});
  }

  function wireFamilyShare(form) {
    var result = document.getElementById('family-share-result');
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      result.textContent = 'Linking…';
      fetch(form.getAttribute('action'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        credentials: 'same-origin',
        body: JSON.stringify({ code: form.elements.code.value, lovedOneId: form.elements.lovedOneId.value }),
      })
        .then(function (res) {
          return res.json().then(function (body) {
            return { ok: res.ok, body: body };
          });
        })
        .then(
          function (r) {
            result.textContent = r.ok
              ? 'Linked: events from ' + r.body.institutionName + ' will appear for ' + r.body.lovedOneName + '.'
              : (r.body.message || 'That did not work.') + (r.body.hint ? ' ' + r.body.hint : '');
          },
          function () {
            result.textContent = 'The link could not be sent; check your connection and try again.';
          },
        );
    });
  }

  // The care pages print times in the browser's zone; until a person chooses one, the browser's own.
  function rememberZone() {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    var pair = 'tz=' + encodeURIComponent(zone);
    var has = function () {
      return document.cookie.split('; ').indexOf(pair) >= 0;
    };
    if (!zone || has()) return;
    document.cookie = pair + '; path=/; max-age=31536000; samesite=lax' + (location.protocol === 'https:' ? '; secure' : '');
    // Reload once so this page's times are in the new zone; never when the cookie did not stick.
    if (document.getElementById('zone-note') && has()) location.reload();
  }

  document.addEventListener('DOMContentLoaded', function () {
    rememberZone();
    var zoneForm = document.getElementById('zone-detect');
    if (zoneForm) sendZone(zoneForm);
    var familyShare = document.getElementById('family-share-form');
    if (familyShare) wireFamilyShare(familyShare);
    var callback = document.getElementById('signin-callback');
    if (callback) finishSignIn(callback);
    document.querySelectorAll('button[data-copy]').forEach(wireCopy);
    // Settings → Notifications: the opt-in lives in its own module, loaded only where it is offered.
    var pushOptIn = document.getElementById('push-opt-in');
    if (pushOptIn)
      import('/assets/push.js').then(
        function (m) {
          m.wirePush(pushOptIn);
        },
        function () {
          document.getElementById('push-status').textContent = 'Notifications could not be set up on this page; reload to try again.';
        },
      );
  });
})();
