// carecircle's service worker: shows a care notification a push brings (title and body) and, on a
// click, opens the page it names on this origin (or focuses a tab already there). Nothing else.
/* global self */
'use strict';

/** The entry's page on this origin; anything else (another site, a javascript: URL) becomes home. */
function sameOrigin(url) {
  try {
    var u = new URL(url, self.location.origin);
    return u.origin === self.location.origin ? u.href : self.location.origin + '/';
  } catch {
    return self.location.origin + '/';
  }
}

self.addEventListener('install', function () {
  self.skipWaiting();
});

self.addEventListener('activate', function (event) {
  event.waitUntil(self.clients.claim());
});

self.addEventListener('push', function (event) {
  var data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    // Not ours, or damaged: still say something, as browsers require a notification for every push.
  }
  var title = typeof data.title === 'string' && data.title ? data.title : 'carecircle';
  var options = { body: typeof data.body === 'string' ? data.body : '', data: { url: sameOrigin(data.url || '/') } };
  if (typeof data.tag === 'string' && data.tag) {
    options.tag = data.tag;
    // A newer alert with the same tag replaces the older one, and still draws attention.
    options.renotify = true;
  }
  event.waitUntil(self.registration.showNotification(title, options));
});

self.addEventListener('notificationclick', function (event) {
  event.notification.close();
  var url = sameOrigin(event.notification.data && event.notification.data.url);
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then(function (windows) {
      for (var i = 0; i < windows.length; i++) if (windows[i].url === url && 'focus' in windows[i]) return windows[i].focus();
      return self.clients.openWindow(url);
    }),
  );
});
