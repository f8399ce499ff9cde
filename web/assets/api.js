/* The connect session API, same origin: the link host passes
 * /v1/link-sessions to the app, so the page needs no API address, no CORS
 * and no other host (CSP connect-src 'self'). The session token lives in
 * this closure and, so that a reload or an app switch resumes the step
 * (the ticket is single use), in this tab's sessionStorage: never in
 * storage that outlives the tab, the URL or a cookie; it goes when the
 * session ends. */
(function (w) {
  'use strict';

  var BDS = w.BDS = w.BDS || {};
  var BASE = '/v1/link-sessions';
  var KEY = 'bds.link';
  var token = null;

  /* One call: resolves to {status, body} (status 0 and body null when the
   * network failed; body null when the answer is not JSON). Never rejects. */
  function call(method, path, body) {
    var headers = { Accept: 'application/json' };
    var init = {
      method: method,
      headers: headers,
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error',
      referrerPolicy: 'no-referrer'
    };
    if (token !== null) headers.Authorization = 'Bearer ' + token;
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return fetch(BASE + path, init).then(function (r) {
      return r.text().then(function (text) {
        var parsed = null;
        try { parsed = JSON.parse(text); } catch (e) { parsed = null; }
        return { status: r.status, body: parsed };
      });
    }, function () {
      return { status: 0, body: null };
    });
  }

  function query(params) {
    var parts = [];
    Object.keys(params).forEach(function (k) {
      if (params[k] !== undefined && params[k] !== null && params[k] !== '') {
        parts.push(encodeURIComponent(k) + '=' + encodeURIComponent(params[k]));
      }
    });
    return parts.length ? '?' + parts.join('&') : '';
  }

  /* ---- this tab's copy: {session, ticket, step, biller} or {ended} ---- */

  function storage() {
    try { return w.sessionStorage; } catch (e) { return null; }	/* blocked */
  }

  function load() {
    var st = storage();
    var v = null;
    if (st === null) return null;
    try { v = JSON.parse(st.getItem(KEY)); } catch (e) { v = null; }
    return v && typeof v === 'object' ? v : null;
  }

  function save(v) {
    var st = storage();
    if (st === null) return;
    try { st.setItem(KEY, JSON.stringify(v)); } catch (e) { /* full or blocked: no resume */ }
  }

  BDS.api = {
    /* POST /v1/link-sessions {ticket}: keeps the session token. */
    open: function (ticket) {
      return call('POST', '', { ticket: ticket }).then(function (res) {
        if (res.status === 201 && res.body && typeof res.body.session_token === 'string') {
          token = res.body.session_token;
        }
        return res;
      });
    },
    billers: function (term, limit) {
      return call('GET', '/billers' + query({ search_term: term, limit: limit }));
    },
    connect: function (billerId, username, password) {
      var body = { username: username, password: password };
      if (billerId) body.biller_id = billerId;
      return call('POST', '/connect', body);
    },
    current: function () { return call('GET', '/current'); },
    mfa: function (answer) { return call('POST', '/mfa', { answer: answer }); },
    resend: function () { return call('POST', '/mfa/resend', {}); },
    request: function (name, url) {
      return call('POST', '/biller-request', { biller_name: name, biller_url: url });
    },
    exit: function (reason) { return call('POST', '/exit', { reason: reason }); },
    hasSession: function () { return token !== null; },

    /* The tab's stored session, when there is one: its token is used again. */
    stored: function () {
      var v = load();
      if (v === null || !v.session || typeof v.session.session_token !== 'string') return null;
      token = v.session.session_token;
      return v;
    },
    /* A session that has ended here, what it ended as (the token is gone). */
    ended: function () {
      var v = load();
      return v !== null && typeof v.ended === 'string' ? v.ended : null;
    },
    /* Keep (or update) what resuming needs. */
    keep: function (fields) {
      var v = load() || {};
      if (typeof v.ended === 'string') v = {};
      Object.keys(fields).forEach(function (k) { v[k] = fields[k]; });
      save(v);
    },
    /* The session ended (connected, exited, or no longer valid): the token
     * goes; what it ended as stays, so that a reload can say so. */
    end: function (how) {
      token = null;
      save({ ended: how });
    },
    forget: function () {
      var st = storage();
      token = null;
      if (st !== null) st.removeItem(KEY);
    }
  };
}(window));
