/* Bill Data Service connect loader: {link_url}/connect.js, included by a
 * client's page. It opens the connect page in an iframe (default) or a
 * popup and hands its messages to callbacks:
 *
 *   <script src="https://link.bds.example/connect.js"></script>
 *   var handle = BDSConnect.open({
 *     url: embed_url,             // from POST /v1/biller-connect/ticket
 *     mode: 'iframe',             // or 'popup'
 *     container: element,         // iframe mode; default a full-window overlay
 *     onSuccess: function (d) {}, // {public_token, link_id?}: exchange it on your server
 *     onExit: function (d) {},    // {reason: user_closed | error}
 *     onEvent: function (d) {}    // {name, error_code?}: open, consent, select_biller, ...
 *   });
 *   handle.close();               // asks the page to exit, then removes it
 *
 * `url` may also be the connect_url with `clientId: 'cli_…'` given: the page
 * may be framed only from the client's allowed origins, and nginx learns
 * the client from client_id. The loader adds `origin` (this page's origin):
 * the page posts only to it, and only when the client registered it.
 * Messages are accepted only from the page's own window and origin.
 * No dependencies, no inline styles in markup (CSSOM only), no globals but
 * BDSConnect. */
(function (w) {
  'use strict';

  if (w.BDSConnect) return;

  var TITLE = 'Link a biller account';

  function call(fn, arg) {
    if (typeof fn === 'function') {
      try { fn(arg); } catch (e) { w.setTimeout(function () { throw e; }, 0); }
    }
  }

  function pageUrl(opts) {
    var u = new URL(opts.url, w.location.href);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('BDSConnect: url must be http(s)');
    if (opts.clientId && !u.searchParams.get('client_id')) u.searchParams.set('client_id', opts.clientId);
    u.searchParams.set('origin', w.location.origin);
    return u;
  }

  function overlay() {
    var d = w.document.createElement('div');
    Object.assign(d.style, {
      position: 'fixed', top: '0', left: '0', right: '0', bottom: '0', zIndex: '2147483000',
      background: 'rgba(16, 20, 30, 0.55)', display: 'flex', alignItems: 'center',
      justifyContent: 'center'
    });
    w.document.body.appendChild(d);
    return d;
  }

  function open(opts) {
    var u = pageUrl(opts || {});
    var origin = u.origin;
    var popup = opts.mode === 'popup';
    var frame = null;
    var box = null;
    var owned = false;
    var win = null;
    var watch = null;
    var done = false;
    var handle;

    function source() {
      return frame !== null ? frame.contentWindow : win;
    }

    function teardown() {
      if (done) return;
      done = true;
      w.removeEventListener('message', onMessage);
      if (watch !== null) w.clearInterval(watch);
      if (frame !== null && frame.parentNode) frame.parentNode.removeChild(frame);
      if (owned && box !== null && box.parentNode) box.parentNode.removeChild(box);
      if (win !== null && !win.closed) win.close();
    }

    function onMessage(e) {
      var d = e.data;
      if (done || e.origin !== origin || e.source !== source() || !d || typeof d.type !== 'string') return;
      if (d.type === 'bds:success' && typeof d.public_token === 'string') {
        var out = { public_token: d.public_token };
        if (typeof d.link_id === 'string') out.link_id = d.link_id;
        call(opts.onSuccess, out);
      } else if (d.type === 'bds:exit') {
        teardown();
        call(opts.onExit, { reason: d.reason === 'error' ? 'error' : 'user_closed' });
      } else if (d.type === 'bds:event' && typeof d.name === 'string') {
        var ev = { name: d.name };
        if (typeof d.error_code === 'string') ev.error_code = d.error_code;
        call(opts.onEvent, ev);
        if (d.name === 'done') teardown();
      }
    }

    w.addEventListener('message', onMessage);
    if (popup) {
      win = w.open(u.href, 'bds_connect', 'popup,width=480,height=720');
      if (!win) {
        teardown();
        call(opts.onExit, { reason: 'error', error: 'popup_blocked' });
        return { close: function () {} };
      }
      /* a popup closed by hand: the page cannot say so itself */
      watch = w.setInterval(function () {
        if (win.closed) {
          teardown();
          call(opts.onExit, { reason: 'user_closed' });
        }
      }, 500);
    } else {
      box = opts.container || null;
      if (box === null) {
        box = overlay();
        owned = true;
      }
      frame = w.document.createElement('iframe');
      frame.title = opts.title || TITLE;
      frame.src = u.href;
      frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms allow-top-navigation-by-user-activation');
      frame.setAttribute('referrerpolicy', 'no-referrer');
      Object.assign(frame.style, {
        border: '0', background: '#fff', borderRadius: owned ? '12px' : '0',
        width: owned ? 'min(100%, 480px)' : '100%', height: owned ? 'min(100%, 720px)' : '100%'
      });
      box.appendChild(frame);
    }

    handle = {
      /* Ask the page to exit (it answers bds:exit, which calls onExit);
       * remove it after a second whatever happens. */
      close: function () {
        var s = source();
        if (done) return;
        if (s) s.postMessage({ type: 'bds:close' }, origin);
        w.setTimeout(teardown, 1000);
      }
    };
    return handle;
  }

  w.BDSConnect = { open: open };
}(window));
