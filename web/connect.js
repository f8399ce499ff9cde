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
 * One connect page at a time: open() while another is open asks that one to
 * exit (its onExit gets user_closed) and removes it. The default overlay is
 * a modal dialog: the rest of the page is inert until it closes, and focus
 * goes back where it was.
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
  var active = null;	/* the open page: {handle, replaced, before} */
  var seq = 0;		/* popup window names: never one an earlier page still has */

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

  /* The page behind a modal overlay: every other child of body, made inert
   * (those that were not already), until the overlay goes. */
  function makeInert(except) {
    var made = [];
    Array.prototype.forEach.call(w.document.body.children, function (el) {
      if (el !== except && !el.inert) {
        el.inert = true;
        made.push(el);
      }
    });
    return made;
  }

  function overlay() {
    var d = w.document.createElement('div');
    d.setAttribute('role', 'dialog');
    d.setAttribute('aria-modal', 'true');
    d.setAttribute('aria-label', TITLE);
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
    var inert = [];
    /* where the focus goes back: a page this one replaces hands on its own */
    var before = active !== null ? active.before : w.document.activeElement;
    var handle;

    function source() {
      return frame !== null ? frame.contentWindow : win;
    }

    function teardown() {
      /* a replaced page leaves the focus to the page that replaced it */
      var current = active !== null && active.handle === handle;

      if (done) return;
      done = true;
      if (current) active = null;
      w.removeEventListener('message', onMessage);
      if (watch !== null) w.clearInterval(watch);
      if (frame !== null && frame.parentNode) frame.parentNode.removeChild(frame);
      if (owned && box !== null && box.parentNode) box.parentNode.removeChild(box);
      if (win !== null && !win.closed) win.close();
      inert.forEach(function (el) { el.inert = false; });
      if (current && owned && before && typeof before.focus === 'function' &&
          w.document.contains(before)) {
        before.focus();
      }
    }

    /* Another open(): this page is asked to exit and hidden now; its
     * bds:exit (or a second) ends it with onExit user_closed. */
    function replaced() {
      var s = source();
      if (done) return;
      if (s) s.postMessage({ type: 'bds:close' }, origin);
      if (owned && box !== null) box.style.display = 'none';
      else if (frame !== null) frame.style.display = 'none';
      inert.forEach(function (el) { el.inert = false; });
      inert = [];
      w.setTimeout(function () {
        if (done) return;
        teardown();
        call(opts.onExit, { reason: 'user_closed' });
      }, 1000);
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

    if (active !== null) active.replaced();
    w.addEventListener('message', onMessage);
    if (popup) {
      win = w.open(u.href, 'bds_connect_' + (++seq), 'popup,width=480,height=720');
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
      /* links out (the privacy notice, the biller's site) open a tab of their own */
      frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms allow-popups' +
        ' allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation');
      frame.setAttribute('referrerpolicy', 'no-referrer');
      Object.assign(frame.style, {
        border: '0', background: '#fff', borderRadius: owned ? '12px' : '0',
        width: owned ? 'min(100%, 480px)' : '100%', height: owned ? 'min(100%, 720px)' : '100%'
      });
      box.appendChild(frame);
      if (owned) {
        inert = makeInert(box);
        frame.focus();
      }
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
    active = { replaced: replaced, handle: handle, before: before };
    return handle;
  }

  w.BDSConnect = { open: open };
}(window));
