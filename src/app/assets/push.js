// Settings → Notifications, in the browser: show whether this browser is subscribed; on opting in,
// ask for permission, register the service worker, subscribe with carecircle's VAPID public key and
// send the subscription to the server; or stop notifications in this browser. A visit alone
// registers nothing. Removing another browser is a plain form and needs none of this.

function keyBytes(base64url) {
  var text = window.atob(base64url.replace(/-/g, '+').replace(/_/g, '/'));
  var bytes = new Uint8Array(text.length);
  for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

async function post(path, body) {
  var res = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    credentials: 'same-origin',
    body: JSON.stringify(body),
  });
  var answer = await res.json().catch(function () {
    return {};
  });
  if (!res.ok) throw new Error((answer.message || 'The server refused it') + (answer.hint ? ' ' + answer.hint : ''));
  return answer;
}

export function wirePush(root) {
  var button = document.getElementById('push-enable');
  var status = document.getElementById('push-status');
  var say = function (text) {
    status.textContent = text;
  };
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) {
    say('This browser cannot receive notifications from websites.');
    return;
  }
  // The worker only the opt-in registered: a browser that never opted in has none to ask.
  var existing = function () {
    return navigator.serviceWorker.getRegistration('/');
  };

  // "On" only when the server lists this browser too: one removed from another device reads as off,
  // and turning it on again sends the same subscription.
  function showState(subscription) {
    button.disabled = false;
    if (subscription && window.Notification.permission === 'granted' && document.querySelector('#push-devices .this-device')) {
      button.textContent = 'Stop notifications in this browser';
      button.dataset.action = 'stop';
      say('This browser receives your notifications.');
    } else {
      button.textContent = 'Notify me in this browser';
      button.dataset.action = 'start';
      say(window.Notification.permission === 'denied' ? 'This browser blocks notifications from carecircle: allow them in its site settings first.' : '');
    }
  }

  async function start() {
    var permission = await window.Notification.requestPermission();
    if (permission !== 'granted') {
      say('Notifications were not allowed, so nothing changed.');
      return null;
    }
    await navigator.serviceWorker.register('/sw.js', { scope: '/' });
    // A push subscription needs an active worker, which `ready` waits for.
    var reg = await navigator.serviceWorker.ready;
    var subscription = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(root.dataset.vapidKey) });
    await post('/api/push/subscriptions', subscription.toJSON());
    // Reloaded so the list shows this browser, marked as such.
    location.reload();
    return subscription;
  }

  async function stop() {
    var reg = await existing();
    var subscription = reg ? await reg.pushManager.getSubscription() : null;
    if (subscription) {
      await post('/api/push/subscriptions/unsubscribe', { endpoint: subscription.endpoint });
      await subscription.unsubscribe();
    }
    location.reload();
    return null;
  }

  existing()
    .then(function (reg) {
      return reg ? reg.pushManager.getSubscription() : null;
    })
    .then(showState, function () {
      say('Notifications could not be set up in this browser.');
    });

  button.addEventListener('click', function () {
    button.disabled = true;
    say(button.dataset.action === 'stop' ? 'Stopping…' : 'Turning notifications on…');
    (button.dataset.action === 'stop' ? stop() : start()).then(
      function (subscription) {
        if (!subscription) button.disabled = false;
      },
      function (err) {
        button.disabled = false;
        say('That did not work: ' + err.message);
      },
    );
  });
}
