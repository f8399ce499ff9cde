/* The connect page: {link_url}/connect[?client_id=cli_…&origin=…]#ticket=…
 *
 * consent -> biller picker (unless the token pins one) -> credentials ->
 * progress (the login runs in bds-jobs; `current` is polled) -> MFA when
 * asked -> success; errors offer a retry; the close button exits.
 *
 * Talking to the embedder: only in the embedded flow, only to the window
 * that framed or opened the page, and only with targetOrigin = the
 * `origin` the loader passed when that origin is one of the client's
 * allowed embed origins (from the session, never from the URL alone).
 * Messages from any other window or origin are ignored. A hosted flow
 * never posts: it redirects to the registered redirect_uri with link_token
 * and status, or shows a done screen. */
(function (w) {
  'use strict';

  var BDS = w.BDS;
  var t = BDS.i18n.t;
  var api = BDS.api;
  var POLL_MS = 700;
  var SLOW_MS = 30000;
  var GIVE_UP_MS = 120000;
  var SCOPES = ['bills', 'statements', 'payment_history', 'usage', 'account_details', 'payments'];
  /* codes after which this page can do nothing more: no "Try again" */
  var FINAL = ['SESSION_EXPIRED', 'SESSION_ENDED', 'INVALID_SESSION', 'TOO_MANY_ATTEMPTS',
    'LINK_REVOKED'];

  var S = {
    session: null,	/* the POST /v1/link-sessions answer */
    biller: null,	/* {id, name, type} being linked */
    target: null,	/* the embedder's window, when it may be told */
    targetOrigin: null,
    screen: 'loading',
    pollTimer: null,
    pollStart: 0,
    retry: null,	/* what "Try again" does on the error screen */
    finished: false	/* connected or exited: nothing more to send */
  };

  function $(id) { return document.getElementById(id); }

  /* ---- screens ---- */

  function show(name, focus) {
    var sections = document.querySelectorAll('main > .screen');
    var i;
    for (i = 0; i < sections.length; i++) sections[i].hidden = sections[i].id !== 'screen-' + name;
    S.screen = name;
    document.body.setAttribute('data-screen', name);
    /* a hosted page that has ended has nothing to close: no ✕ */
    $('close').hidden = !!(S.finished && S.session && S.session.hosted);
    var heading = $('screen-' + name).querySelector('h1');
    if (heading) document.title = heading.textContent + ' · ' + t('brand');
    (focus || heading || $('main')).focus();
  }

  function say(text) {
    /* re-set so the same message is announced again */
    $('announce').textContent = '';
    w.setTimeout(function () { $('announce').textContent = text; }, 50);
  }

  function alertIn(el, text) {
    el.textContent = text || '';
    el.hidden = !text;
  }

  /* ---- the embedder ---- */

  function post(msg) {
    if (S.target !== null && S.targetOrigin !== null) S.target.postMessage(msg, S.targetOrigin);
  }

  function event(name, extra) {
    var msg = { type: 'bds:event', name: name };
    if (extra && extra.error_code) msg.error_code = extra.error_code;
    post(msg);
  }

  /* Decide whom the page may talk to, from the session: never in a hosted
   * flow; else the framing parent or the opener, with the loader's origin
   * when the client registered it. */
  function chooseTarget(params) {
    var origin = params.get('origin');
    var allowed = (S.session.client && S.session.client.allowed_embed_origins) || [];
    var win = null;
    if (S.session.hosted) return;
    if (w.parent !== w) win = w.parent;
    else if (w.opener) win = w.opener;
    if (win !== null && origin && allowed.indexOf(origin) >= 0) {
      S.target = win;
      S.targetOrigin = origin;
    }
  }

  w.addEventListener('message', function (e) {
    if (S.target === null || e.source !== S.target || e.origin !== S.targetOrigin) return;
    if (e.data && e.data.type === 'bds:close') exit('user_closed');
  });

  /* ---- errors ---- */

  function errorText(code) {
    if (code && BDS.i18n.has('error.' + code)) return t('error.' + code);
    return t('error.generic');
  }

  /* The error screen; retry is what "Try again" does (null: no retry). */
  function fail(code, retry) {
    S.retry = retry || null;
    $('error-body').textContent = errorText(code);
    $('error-retry').hidden = S.retry === null;
    event('error', { error_code: code });
    show('error');
  }

  /* An API answer that is not what the step expects. */
  function failFrom(res, retry) {
    var code = res.body && res.body.error_code;
    if (res.status === 0) return fail('network', retry);
    if (FINAL.indexOf(code) >= 0) return fail(code, null);
    return fail(code, retry);
  }

  /* ---- steps ---- */

  function start() {
    var params = new URLSearchParams(w.location.search);
    var frag = new URLSearchParams(w.location.hash.replace(/^#/, ''));
    var ticket = frag.get('ticket');

    /* the ticket is single use: drop it from the address bar and history */
    if (w.location.hash) w.history.replaceState(null, '', w.location.pathname + w.location.search);
    BDS.i18n.load(navigator.language).then(function () {
      BDS.i18n.apply();
      if (!ticket) return fail('no_ticket', null);
      return openSession(ticket, params);
    });
  }

  /* Open the session with the ticket (again on a retry after a network
   * failure: the ticket is kept here, no longer in the URL). */
  function openSession(ticket, params) {
    var urlClient = params.get('client_id');
    return api.open(ticket).then(function (res) {
      if (res.status !== 201 || !res.body || !res.body.client) {
        return failFrom(res, res.status === 0 ? function () { openSession(ticket, params); } : null);
      }
      S.session = res.body;
      /* the URL names the client nginx framed the page for: it must be
       * the session's, or another client's origins would hold the frame */
      if (urlClient !== null && urlClient !== S.session.client.id) {
        return fail('client_mismatch', null);
      }
      chooseTarget(params);
      return BDS.i18n.load(S.session.language || 'en').then(function () {
        BDS.i18n.set('client', S.session.client.name);
        if (S.session.biller) setBiller(S.session.biller);
        BDS.i18n.apply();
        event('open');
        consent();
      });
    });
  }

  function setBiller(b) {
    S.biller = { id: b.id, name: b.name, type: b.type };
    BDS.i18n.set('biller', b.name);
  }

  /* update mode repairs a link the user already has */
  function update() {
    return !!(S.session && S.session.mode === 'update');
  }

  function consent() {
    var list = $('consent-scopes');
    var scopes = (S.session.consents || []).filter(function (s) { return SCOPES.indexOf(s) >= 0; });
    if (scopes.length === 0) scopes = ['bills'];
    while (list.firstChild) list.removeChild(list.firstChild);
    scopes.forEach(function (s) {
      var li = document.createElement('li');
      li.textContent = t('scope.' + s);
      list.appendChild(li);
    });
    $('consent-title').textContent = update() ? t('consent.title_update') :
      S.biller ? t('consent.title_biller') : t('consent.title');
    $('consent-intro').textContent = t('consent.intro');
    $('consent-secure').textContent = t('consent.secure');
    show('consent');
  }

  var picker = null;

  function pickBiller() {
    if (picker === null) {
      picker = new BDS.Picker({
        input: $('biller-search'),
        list: $('biller-list'),
        status: $('biller-status'),
        empty: $('biller-empty'),
        t: t,
        search: function (term, limit) { return api.billers(term, limit); },
        label: function (b) {
          return BDS.i18n.has('type.' + b.type) ? t('type.' + b.type) : '';
        },
        fail: function (res) { failFrom(res, pickBiller); },
        choose: function (b) {
          setBiller(b);
          event('select_biller');
          credentials();
        }
      });
    }
    show('picker', $('biller-search'));
    picker.search();
  }

  function credentials(error) {
    $('cred-title').textContent = t('credentials.title');
    $('cred-intro').textContent = t('credentials.intro');
    $('cred-other').hidden = !!S.session.biller;
    alertIn($('cred-error'), error);
    $('cred-username').setAttribute('aria-invalid', error ? 'true' : 'false');
    $('cred-password').setAttribute('aria-invalid', error ? 'true' : 'false');
    $('cred-password').value = '';
    $('cred-submit').disabled = false;
    show('credentials', error ? $('cred-password') : $('cred-username'));
  }

  function submitCredentials(e) {
    var user = $('cred-username').value;
    var pass = $('cred-password').value;
    e.preventDefault();
    if (!user || !pass) {
      alertIn($('cred-error'), t('credentials.missing'));
      (user ? $('cred-password') : $('cred-username')).focus();
      return;
    }
    $('cred-submit').disabled = true;
    event('submit_credentials');
    api.connect(S.biller.id, user, pass).then(function (res) {
      $('cred-password').value = '';
      pass = null;
      if (res.status === 202) return progress();
      /* lost, refused as a conflict, or a server error: the login may have
       * been taken all the same, so ask before offering the form again */
      if (unsure(res)) return settle(function () { failFrom(res, function () { credentials(); }); });
      return failFrom(res, function () { credentials(); });
    });
  }

  /* The catalog's words in the page's language; the biller's own prompt
   * (its language, perhaps a hint such as where the code went) beside. */
  function mfa(prompt, error) {
    $('mfa-prompt').textContent = t('mfa.intro');
    $('mfa-biller-prompt').textContent = prompt ? t('mfa.biller_says', { prompt: prompt }) : '';
    $('mfa-biller-prompt').hidden = !prompt;
    alertIn($('mfa-error'), error);
    $('mfa-code').setAttribute('aria-invalid', error ? 'true' : 'false');
    $('mfa-code').value = '';
    $('mfa-submit').disabled = false;
    event('mfa_required');
    show('mfa', $('mfa-code'));
  }

  function submitMfa(e) {
    var answer = $('mfa-code').value.trim();
    e.preventDefault();
    if (!answer) {
      alertIn($('mfa-error'), t('mfa.missing'));
      $('mfa-code').focus();
      return;
    }
    $('mfa-submit').disabled = true;
    event('submit_mfa');
    api.mfa(answer).then(function (res) {
      $('mfa-code').value = '';
      if (res.status === 202) return progress();
      if (unsure(res)) return settle(function () { failFrom(res, poll); });
      return failFrom(res, poll);
    });
  }

  /* ---- progress: poll `current` until the job has an outcome ---- */

  function progress() {
    $('progress-title').textContent = t('progress.title');
    $('progress-status').textContent = t('progress.status');
    S.pollStart = Date.now();
    show('progress');
    schedulePoll();
  }

  function schedulePoll() {
    if (S.pollTimer !== null) w.clearTimeout(S.pollTimer);
    S.pollTimer = w.setTimeout(poll, POLL_MS);
  }

  function poll() {
    S.pollTimer = null;
    if (S.screen !== 'progress') {
      progress();
      return;
    }
    api.current().then(function (res) {
      var c = res.body;
      if (S.screen !== 'progress') return;	/* the user left meanwhile */
      if (res.status !== 200 || !c) return failFrom(res, poll);
      switch (c.status) {
        case 'connecting':
        case 'awaiting_credentials':
          if (Date.now() - S.pollStart > GIVE_UP_MS) return fail('timeout', poll);
          if (Date.now() - S.pollStart > SLOW_MS) $('progress-status').textContent = t('progress.slow');
          return schedulePoll();
        case 'mfa_required':
          return mfa(c.mfa && c.mfa.prompt, c.error_code === 'MFA_FAILED' ? mfaFailed(c) : null);
        case 'connected':
          return connected(c);
        case 'failed':
          return failed(c);
        case 'exited':
          return exited();
        case 'expired':
          return fail('SESSION_EXPIRED', null);
        default:
          return fail(null, poll);
      }
    });
  }

  /* a wrong code spends one of the attempts the password has too */
  function mfaFailed(c) {
    var n = c.attempts_remaining;
    if (typeof n !== 'number') return t('mfa.failed');
    return n === 1 ? t('mfa.failed_last') : t('mfa.failed_n', { n: n });
  }

  function failed(c) {
    /* ended: too many failed logins, of this session or of the account
     * (TOO_MANY_ATTEMPTS), or the link to repair is gone (LINK_REVOKED) */
    if (c.ended) return fail(FINAL.indexOf(c.error_code) >= 0 ? c.error_code : 'SESSION_ENDED', null);
    /* update mode: the login must be the one the link was made with */
    if (c.error_code === 'INVALID_UPDATED_USERNAME') {
      event('error', { error_code: c.error_code });
      return credentials(t('error.INVALID_UPDATED_USERNAME'));
    }
    if (c.error_code === 'INVALID_CREDENTIALS' || c.error_code === 'MFA_FAILED') {
      event('error', { error_code: c.error_code });
      return credentials(c.attempts_remaining === 1 ? t('credentials.invalid_last') :
        t('credentials.invalid', { n: c.attempts_remaining }));
    }
    return fail(c.error_code, function () { credentials(); });
  }

  /* ---- endings ---- */

  function redirect(status) {
    var u;
    try {
      u = new URL(S.session.redirect_uri);
    } catch (e) {
      return false;
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return false;
    u.searchParams.set('link_token', S.session.link_token);
    u.searchParams.set('status', status);
    w.location.assign(u.href);
    return true;
  }

  function connected(c) {
    S.finished = true;
    $('success-title').textContent = t(update() ? 'success.title_update' : 'success.title');
    $('success-body').textContent = t(update() ? 'success.body_update' : 'success.body');
    $('success-next').textContent = '';
    $('success-continue').hidden = false;
    if (S.session.hosted) {
      event('connected');
      if (S.session.redirect_uri) {
        $('success-next').textContent = t('success.redirecting');
        $('success-continue').hidden = true;
        show('success');
        w.setTimeout(function () { redirect('completed'); }, 800);
        return;
      }
      $('success-next').textContent = t('success.close');
      $('success-continue').hidden = true;
      show('success');
      return;
    }
    if (S.target !== null && c.public_token) {
      var msg = { type: 'bds:success', public_token: c.public_token };
      if (c.link_id) msg.link_id = c.link_id;
      post(msg);
    } else {
      $('success-next').textContent = t('success.close');
      $('success-continue').hidden = true;
    }
    show('success');
  }

  function exited() {
    S.finished = true;
    if (S.session && S.session.hosted && S.session.redirect_uri && redirect('exited')) return;
    show('exit');
  }

  /* The user leaves: the session ends (link.session_finished exited) and
   * the embedder hears bds:exit. After success it only closes. */
  function exit(reason) {
    if (S.pollTimer !== null) {
      w.clearTimeout(S.pollTimer);
      S.pollTimer = null;
    }
    if (S.finished) {
      event('done');
      return;
    }
    if (!api.hasSession()) {
      S.finished = true;
      show('exit');
      return;
    }
    api.exit(reason).then(function (res) {
      function leave() {
        post({ type: 'bds:exit', reason: reason });
        exited();
      }

      if (res.status >= 200 && res.status < 300) return leave();
      /* refused (409: the login is under way, or it ended) or lost: the
       * session's own state decides, never a guess that it exited */
      return settle(leave);
    });
  }

  /* An answer after which the session may have moved anyway. */
  function unsure(res) {
    return res.status === 0 || res.status === 409 || res.status >= 500;
  }

  /* Follow the session where `current` says it is; otherwise (no answer,
   * or no login under way) what the caller would have done. */
  function settle(otherwise) {
    api.current().then(function (res) {
      var c = res.body;

      if (res.status !== 200 || !c) return otherwise();
      switch (c.status) {
        case 'connecting':
          return progress();
        case 'mfa_required':
          return mfa(c.mfa && c.mfa.prompt, null);
        case 'connected':
          return connected(c);
        case 'failed':
          return failed(c);
        case 'exited':
          post({ type: 'bds:exit', reason: c.exit_reason || 'user_closed' });
          return exited();
        default:
          return otherwise();
      }
    });
  }

  /* ---- wiring ---- */

  document.addEventListener('DOMContentLoaded', function () {
    $('consent-continue').addEventListener('click', function () {
      event('consent');
      if (S.biller && S.session.biller) credentials();
      else pickBiller();
    });
    $('cred-form').addEventListener('submit', submitCredentials);
    $('cred-other').addEventListener('click', function () { pickBiller(); });
    $('mfa-form').addEventListener('submit', submitMfa);
    $('success-continue').addEventListener('click', function () { event('done'); });
    $('error-retry').addEventListener('click', function () {
      var again = S.retry;
      if (again) again();
    });
    $('error-exit').addEventListener('click', function () { exit('error'); });
    $('close').addEventListener('click', function () { exit('user_closed'); });
    /* a new connect link opened in this tab (same path, new #ticket=…)
     * is a fragment change, not a load: start again from it */
    w.addEventListener('hashchange', function () {
      if (/(^#|&)ticket=/.test(w.location.hash)) w.location.reload();
    });
    start();
  });
}(window));
