/* A frame of another origin inside the test app (t/browser): it forges the
 * messages of both sides. The connect page must ignore a bds:close that
 * does not come from its embedder; connect.js must ignore a bds:success or
 * bds:exit that does not come from its frame. */
(function () {
  'use strict';
  var page = window.parent.frames[0];
  page.postMessage({ type: 'bds:close' }, '*');
  window.parent.postMessage({ type: 'bds:success', public_token: 'bds_pub_forged' }, '*');
  window.parent.postMessage({ type: 'bds:exit', reason: 'error' }, '*');
  window.parent.postMessage({ type: 'bds:event', name: 'done' }, '*');
  document.body.setAttribute('data-sent', 'yes');
}());
