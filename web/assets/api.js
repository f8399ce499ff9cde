/* The connect session API, same origin: the link host passes
 * /v1/link-sessions to the app, so the page needs no API address, no CORS
 * and no other host (CSP connect-src 'self'). The session token lives in
 * this closure only: never in storage, the URL or a cookie. */
(function (w) {
  'use strict';

  var BDS = w.BDS = w.BDS || {};
  var BASE = '/v1/link-sessions';
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
    exit: function (reason) { return call('POST', '/exit', { reason: reason }); },
    hasSession: function () { return token !== null; }
  };
}(window));
