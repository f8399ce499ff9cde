/* The test app: loads {link}/connect.js, opens the connect page on a click
 * (a user gesture, so a popup is allowed) and records every callback in
 * window.bdsLog, which the selenium script reads. Parameters in the
 * fragment: loader, url, mode (iframe | popup), client_id (optional). */
(function () {
  'use strict';
  var p = new URLSearchParams(location.hash.replace(/^#/, ''));
  var handle = null;
  window.bdsLog = [];

  function rec(kind, data) {
    window.bdsLog.push({ kind: kind, data: data });
    document.getElementById('log').textContent = JSON.stringify(window.bdsLog, null, 1);
  }

  var s = document.createElement('script');
  s.src = p.get('loader');
  s.onload = function () { document.getElementById('open').disabled = false; };
  s.onerror = function () { rec('loader_error', {}); };
  document.head.appendChild(s);

  document.getElementById('open').addEventListener('click', function () {
    handle = window.BDSConnect.open({
      url: p.get('url'),
      clientId: p.get('client_id') || undefined,
      mode: p.get('mode') || 'iframe',
      onSuccess: function (d) { rec('success', d); },
      onExit: function (d) { rec('exit', d); },
      onEvent: function (d) { rec('event', d); }
    });
  });
  document.getElementById('close-link').addEventListener('click', function () {
    if (handle) handle.close();
  });
}());
