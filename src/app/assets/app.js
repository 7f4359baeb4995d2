// carecircle app pages: finish a sign-in, and copy a freshly minted key. Pages work without it
// except for the sign-in callback, which must read the token from the URL fragment.
(function () {
  'use strict';

  async function finishSignIn(el) {
    var params = new URLSearchParams(location.hash.slice(1));
    var token = params.get('id_token');
    var next = el.getAttribute('data-next') || '/';
    history.replaceState(null, '', location.pathname + location.search);
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
    var body = await res.json().catch(function () { return {}; });
    if (res.ok && body.authenticated) {
      location.replace(next);
    } else {
      el.textContent = (body && body.message) || 'Sign-in failed. Please try again.';
    }
  }

  function wireCopy(button) {
    button.addEventListener('click', function () {
      var target = document.getElementById(button.getAttribute('data-copy'));
      if (!target) return;
      navigator.clipboard.writeText(target.textContent.trim()).then(function () {
        button.textContent = 'Copied';
      }, function () {
        button.textContent = 'Select and copy the key above';
      });
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    var callback = document.getElementById('signin-callback');
    if (callback) finishSignIn(callback);
    document.querySelectorAll('button[data-copy]').forEach(wireCopy);
  });
})();
