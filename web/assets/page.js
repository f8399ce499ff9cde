/* The connect page: {link_url}/connect[?client_id=cli_…&origin=…]#ticket=…
 *
 * consent -> biller picker (unless the token pins one; "Can't find your
 * biller?" asks for it) -> credentials -> progress (the login runs in
 * bds-jobs; `current` is polled) -> MFA when asked -> success; errors say
 * what happened and offer a retry; the close button exits, asking first
 * while a flow is under way.
 *
 * A reload or an app switch resumes: the session (never the ticket, which
 * is single use) and the step are kept for this tab (BDS.api); `current`
 * says where the login is. A ticket opened again after its session
 * connected (409 LINK_SESSION_COMPLETED) says "already linked".
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
  var HTTPS = 'https:';
  var POLL_MS = 700;
  var SLOW_MS = 30000;
  var GIVE_UP_MS = 120000;
  var SCOPES = ['bills', 'statements', 'payment_history', 'usage', 'account_details', 'payments'];
  /* codes after which this page can do nothing more: no "Try again" */
  var FINAL = ['SESSION_EXPIRED', 'SESSION_ENDED', 'INVALID_SESSION', 'TOO_MANY_ATTEMPTS',
    'LINK_REVOKED'];
  /* the steps a reload comes back to while the user is still choosing */
  var CHOOSING = ['consent', 'picker', 'request', 'requested', 'credentials'];
  /* the screens ✕ asks on before it leaves */
  var UNDER_WAY = ['picker', 'request', 'credentials', 'progress', 'mfa'];
  var LOGGING_IN = ['credentials', 'progress', 'mfa'];
  /* failures that concern the biller account: its website helps; and the
   * ones its own password reset may fix */
  var WEBSITE = ['ACCOUNT_LOCKED', 'BILLER_UNAVAILABLE', 'TOO_MANY_ATTEMPTS', 'SESSION_ENDED',
    'INVALID_CREDENTIALS', 'MFA_FAILED'];
  var FORGOT = ['ACCOUNT_LOCKED', 'TOO_MANY_ATTEMPTS', 'SESSION_ENDED', 'INVALID_CREDENTIALS'];

  var S = {
    session: null,	/* the POST /v1/link-sessions answer */
    biller: null,	/* the picker item being linked */
    ticket: null,	/* the fingerprint of the ticket this session came from */
    resent: false,	/* a new MFA code was asked for */
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
    if (S.finished && $('confirm').open) $('confirm').close();
    $('env-badge').hidden = !(S.session && S.session.environment === 'sandbox');
    if (!S.finished && api.hasSession()) {
      api.keep({ step: name, biller: S.biller });
    }
    var heading = $('screen-' + name).querySelector('h1');
    if (heading) document.title = heading.textContent + ' · ' + t('brand');
    /* the heading says where the user is; a field with an error instead */
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

  /* The heading says what happened ("Account locked"). */
  function errorTitle(code) {
    if (code && BDS.i18n.has('error_title.' + code)) return t('error_title.' + code);
    return t('error.title');
  }

  /* A link out to the biller: only an http(s) URL from the catalog. */
  function linkOut(a, url, text) {
    var ok = false;
    try {
      ok = /^https?:$/.test(new URL(url).protocol);
    } catch (e) {
      ok = false;
    }
    a.hidden = !ok;
    if (!ok) return;
    a.href = url;
    if (text) a.textContent = text;
  }

  /* The error screen; retry is what "Try again" does (null: no retry). */
  function fail(code, retry) {
    var b = S.biller || {};
    S.retry = retry || null;
    if (FINAL.indexOf(code) >= 0) api.forget();
    $('error-title').textContent = errorTitle(code);
    $('error-body').textContent = errorText(code);
    $('error-retry').hidden = S.retry === null;
    linkOut($('error-website'), WEBSITE.indexOf(code) >= 0 ? b.website : null,
      t('error.website'));
    linkOut($('error-forgot'), FORGOT.indexOf(code) >= 0 ? b.login_url : null, null);
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

  /* Not the ticket: only enough to tell it from another one (FNV-1a). */
  function fingerprint(text) {
    var h = 0x811c9dc5;
    var i;
    for (i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return ('0000000' + h.toString(16)).slice(-8);
  }

  function start() {
    var params = new URLSearchParams(w.location.search);
    var frag = new URLSearchParams(w.location.hash.replace(/^#/, ''));
    var ticket = frag.get('ticket');
    var stored = api.stored();
    var ended = api.ended();

    BDS.i18n.load(stored ? stored.session.language || 'en' : navigator.language).then(function () {
      BDS.i18n.apply();
      /* this tab's session, from this ticket or with none in the URL: the
       * used ticket is not redeemed again */
      if (stored && (!ticket || stored.ticket === fingerprint(ticket))) {
        clearTicket();
        return resume(stored, params);
      }
      if (ticket) {
        api.forget();
        return openSession(ticket, params);
      }
      if (ended === 'connected') return linked();
      if (ended === 'exited') return show('exit');
      return fail('no_ticket', null);
    });
  }

  /* the ticket is single use: off the address bar and history once spent */
  function clearTicket() {
    if (w.location.hash) w.history.replaceState(null, '', w.location.pathname + w.location.search);
  }

  /* Open the session with the ticket (again on a retry after a network
   * failure: the ticket stays in the URL until an answer spends it). */
  function openSession(ticket, params) {
    var urlClient = params.get('client_id');
    return api.open(ticket).then(function (res) {
      if (res.status !== 0) clearTicket();
      if (res.status === 409 && res.body && res.body.error_code === 'LINK_SESSION_COMPLETED') {
        return linked();
      }
      if (res.status !== 201 || !res.body || !res.body.client) {
        return failFrom(res, res.status === 0 ? function () { openSession(ticket, params); } : null);
      }
      S.session = res.body;
      S.ticket = fingerprint(ticket);
      /* the URL names the client nginx framed the page for: it must be
       * the session's, or another client's origins would hold the frame */
      if (urlClient !== null && urlClient !== S.session.client.id) {
        api.forget();
        return fail('client_mismatch', null);
      }
      api.keep({ session: S.session, ticket: S.ticket });
      return begin(params).then(function () {
        event('open');
        consent();
      });
    });
  }

  /* What the session says about the page: its language, the names in the
   * sentences, whom it may tell. */
  function begin(params) {
    chooseTarget(params);
    return BDS.i18n.load(S.session.language || 'en').then(function () {
      BDS.i18n.set('client', S.session.client.name);
      if (S.session.biller) setBiller(S.session.biller);
      BDS.i18n.apply();
    });
  }

  /* Back where the user was: `current` says where the login is; while the
   * user is still choosing, the step kept for the tab. */
  function resume(stored, params) {
    S.session = stored.session;
    S.ticket = stored.ticket;
    return begin(params).then(function () {
      if (stored.biller && !S.session.biller) setBiller(stored.biller);
      return api.current();
    }).then(function (res) {
      var c = res.body;
      var step = CHOOSING.indexOf(stored.step) >= 0 ? stored.step : null;
      if (res.status === 0) return fail('network', function () { resume(stored, params); });
      if (res.status !== 200 || !c) {
        api.forget();
        return failFrom(res, null);
      }
      if (c.status === 'awaiting_credentials' || (c.status === 'failed' && !c.ended && step)) {
        return choosing(step, stored);
      }
      return follow(c, function () { choosing(step, stored); });
    });
  }

  function choosing(step, stored) {
    if (step === 'credentials' && S.biller) return credentials();
    if (step === 'picker') return pickBiller();
    if (step === 'request') return request();
    if (step === 'requested' && typeof stored.requested === 'string') {
      return requested(stored.requested);
    }
    return consent();
  }

  function setBiller(b) {
    S.biller = {
      id: b.id, name: b.name, type: b.type, website: b.website || null,
      login_url: b.login_url || null,
      consent_scopes: Array.isArray(b.consent_scopes) ? b.consent_scopes : null
    };
    BDS.i18n.set('biller', b.name);
  }

  /* What the client will receive: the consents it asked for that the
   * biller gives (all it asked for while no biller is chosen). */
  function scopes() {
    var given = S.biller && S.biller.consent_scopes;
    var out = (S.session.consents || []).filter(function (s) {
      return SCOPES.indexOf(s) >= 0 && (!given || given.indexOf(s) >= 0);
    });
    return out;
  }

  function listScopes(list, which) {
    while (list.firstChild) list.removeChild(list.firstChild);
    which.forEach(function (s) {
      var li = document.createElement('li');
      li.setAttribute('data-scope', s);
      li.textContent = t('scope.' + s);
      list.appendChild(li);
    });
  }

  /* update mode repairs a link the user already has */
  function update() {
    return !!(S.session && S.session.mode === 'update');
  }

  function consent() {
    var which = scopes();
    var domain = S.session.client.domain;
    var privacy = S.session.privacy_url;
    listScopes($('consent-scopes'), which);
    $('consent-title').textContent = update() ? t('consent.title_update') :
      S.biller ? t('consent.title_biller') : t('consent.title');
    $('consent-client').textContent = typeof domain === 'string' && domain ?
      t('consent.client', { domain: domain }) : t('consent.client_nodomain');
    $('consent-intro').textContent = which.length ? t('consent.intro') : t('consent.intro_none');
    $('consent-scopes').hidden = which.length === 0;
    $('consent-secure').textContent = t('consent.secure');
    $('consent-disconnect').textContent = t('consent.disconnect');
    /* a page of the link host only */
    if (typeof privacy === 'string' && /^\/[^/\\]/.test(privacy)) $('consent-privacy').href = privacy;
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
    show('picker');
    picker.search();
  }

  /* "Can't find your biller?": the name (what was searched) and website. */
  function request() {
    var term = $('biller-search').value.trim();
    $('request-intro').textContent = t('request.intro');
    if (!$('request-name').value && term) $('request-name').value = term;
    alertIn($('request-error'), null);
    $('request-name').setAttribute('aria-invalid', 'false');
    $('request-url').setAttribute('aria-invalid', 'false');
    $('request-submit').disabled = false;
    show('request');
  }

  function requested(name) {
    $('requested-body').textContent = t('requested.body', { name: name });
    show('requested');
  }

  /* A website as typed ("www.citypower.com") as the https URL it means
   * (the service takes absolute https URLs only); the page fetches none. */
  function website(text) {
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : HTTPS + '//' + text;
  }

  function submitRequest(e) {
    var name = $('request-name').value.trim();
    var url = $('request-url').value.trim();
    e.preventDefault();
    $('request-name').setAttribute('aria-invalid', name ? 'false' : 'true');
    $('request-url').setAttribute('aria-invalid', url ? 'false' : 'true');
    if (!name || !url) {
      alertIn($('request-error'), t('request.missing'));
      (name ? $('request-url') : $('request-name')).focus();
      return;
    }
    $('request-submit').disabled = true;
    api.request(name, website(url)).then(function (res) {
      var field = res.body && Array.isArray(res.body.errors) && res.body.errors[0] ?
        String(res.body.errors[0].field || '') : '';
      $('request-submit').disabled = false;
      if (res.status === 201) {
        $('request-name').value = '';
        $('request-url').value = '';
        api.keep({ requested: name });
        return requested(name);
      }
      if (res.status === 400 && /biller_(url|name)$/.test(field)) {
        var bad = /url$/.test(field) ? $('request-url') : $('request-name');
        bad.setAttribute('aria-invalid', 'true');
        alertIn($('request-error'), t(/url$/.test(field) ? 'request.bad_url' : 'request.bad_name'));
        bad.focus();
        return null;
      }
      return failFrom(res, request);
    });
  }

  function credentials(error) {
    var picked = !S.session.biller;
    var which = scopes();
    $('cred-title').textContent = t('credentials.title');
    $('cred-intro').textContent = t('credentials.intro');
    $('cred-other').hidden = !picked;
    /* consent listed what was asked for; this biller's share of it */
    $('cred-scopes-intro').textContent = t('credentials.scopes');
    $('cred-scopes-intro').hidden = !picked || which.length === 0;
    listScopes($('cred-scopes'), picked ? which : []);
    $('cred-scopes').hidden = !picked || which.length === 0;
    linkOut($('cred-forgot'), S.biller && S.biller.login_url, null);
    $('sandbox-logins').hidden = S.session.environment !== 'sandbox';
    alertIn($('cred-error'), error);
    $('cred-username').setAttribute('aria-invalid', error ? 'true' : 'false');
    $('cred-password').setAttribute('aria-invalid', error ? 'true' : 'false');
    $('cred-password').value = '';
    $('cred-submit').disabled = false;
    show('credentials', error ? $('cred-password') : null);
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
  function mfa(m, error) {
    var prompt = m && m.prompt;
    $('mfa-prompt').textContent = t('mfa.intro');
    $('mfa-biller-prompt').textContent = prompt ? t('mfa.biller_says', { prompt: prompt }) : '';
    $('mfa-biller-prompt').hidden = !prompt;
    alertIn($('mfa-error'), error);
    $('mfa-status').textContent = S.resent ? t('mfa.resent') : '';
    S.resent = false;
    $('mfa-resend').hidden = !(m && m.can_resend === true);
    $('mfa-resend').disabled = false;
    $('mfa-code').setAttribute('aria-invalid', error ? 'true' : 'false');
    $('mfa-code').value = '';
    $('mfa-submit').disabled = false;
    event('mfa_required');
    show('mfa', error ? $('mfa-code') : null);
  }

  /* "Resend code": the biller is asked again; `current` brings the new
   * challenge. Refused (the limit, or the session moved): it says so. */
  function resend() {
    $('mfa-resend').disabled = true;
    api.resend().then(function (res) {
      if (res.status === 202) {
        S.resent = true;
        return progress();
      }
      function refused() {
        $('mfa-resend').hidden = true;
        $('mfa-status').textContent = t('mfa.resend_failed');
      }

      /* the limit; else the session may have moved (an answer came in) */
      if (res.body && res.body.error_code === 'MFA_RESEND_LIMIT') return refused();
      if (unsure(res)) return settle(refused);
      return refused();
    });
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
          return mfa(c.mfa, c.error_code === 'MFA_FAILED' ? mfaFailed(c) : null);
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
    api.end('connected');
    $('success-title').textContent = t(update() ? 'success.title_update' : 'success.title');
    $('success-body').textContent = t(update() ? 'success.body_update' : 'success.body');
    $('success-next').textContent = '';
    $('success-done').hidden = false;
    if (S.session.hosted) {
      event('connected');
      if (S.session.redirect_uri) {
        $('success-next').textContent = t('success.redirecting');
        $('success-done').hidden = true;
        show('success');
        w.setTimeout(function () { redirect('completed'); }, 800);
        return;
      }
      show('success');
      return;
    }
    if (S.target !== null && c.public_token) {
      var msg = { type: 'bds:success', public_token: c.public_token };
      if (c.link_id) msg.link_id = c.link_id;
      post(msg);
    }
    show('success');
  }

  /* Done: the embedder (told it may close: bds:event done) removes the
   * page; a page nobody may be told closes its window when the browser
   * lets it (a popup), else says the window can be closed. */
  function done() {
    if (S.target !== null) {
      event('done');
      return;
    }
    w.close();
    w.setTimeout(function () {
      if (w.closed) return;
      $('success-done').hidden = true;
      $('success-next').textContent = t('success.close');
      $('success-next').focus();
    }, 300);
  }

  /* A ticket whose session connected, opened again. */
  function linked() {
    S.finished = true;
    show('linked');
  }

  function exited() {
    S.finished = true;
    api.end('exited');
    if (S.session && S.session.hosted && S.session.redirect_uri && redirect('exited')) return;
    show('exit');
  }

  /* ✕: while a flow is under way it asks first (a modal dialog; Escape or
   * "Stay" keep the user where they were). */
  function close() {
    if (!S.finished && api.hasSession() && UNDER_WAY.indexOf(S.screen) >= 0) {
      /* the biller's name once the user is logging in to it */
      $('confirm-body').textContent = t(S.biller && LOGGING_IN.indexOf(S.screen) >= 0 ?
        'confirm.body_biller' : 'confirm.body');
      $('confirm').showModal();
      $('confirm-stay').focus();
      return;
    }
    exit('user_closed');
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

  /* Go where the session is; otherwise (no login under way) what the
   * caller would have done. */
  function follow(c, otherwise) {
    switch (c.status) {
      case 'connecting':
        return progress();
      case 'mfa_required':
        return mfa(c.mfa, null);
      case 'connected':
        return connected(c);
      case 'failed':
        return failed(c);
      case 'exited':
        post({ type: 'bds:exit', reason: c.exit_reason || 'user_closed' });
        return exited();
      case 'expired':
        return fail('SESSION_EXPIRED', null);
      default:
        return otherwise();
    }
  }

  /* Follow the session where `current` says it is; otherwise (no answer,
   * or no login under way) what the caller would have done. */
  function settle(otherwise) {
    api.current().then(function (res) {
      if (res.status !== 200 || !res.body) return otherwise();
      return follow(res.body, otherwise);
    });
  }

  /* ---- wiring ---- */

  document.addEventListener('DOMContentLoaded', function () {
    $('consent-continue').addEventListener('click', function () {
      event('consent');
      if (S.biller && S.session.biller) credentials();
      else pickBiller();
    });
    $('biller-missing').addEventListener('click', request);
    $('request-form').addEventListener('submit', submitRequest);
    $('request-back').addEventListener('click', function () { pickBiller(); });
    $('requested-back').addEventListener('click', function () { pickBiller(); });
    $('cred-form').addEventListener('submit', submitCredentials);
    $('cred-other').addEventListener('click', function () { pickBiller(); });
    $('mfa-form').addEventListener('submit', submitMfa);
    $('mfa-resend').addEventListener('click', resend);
    $('success-done').addEventListener('click', done);
    $('error-retry').addEventListener('click', function () {
      var again = S.retry;
      if (again) again();
    });
    $('error-exit').addEventListener('click', function () { exit('error'); });
    $('close').addEventListener('click', close);
    $('confirm-stay').addEventListener('click', function () { $('confirm').close(); });
    $('confirm-leave').addEventListener('click', function () {
      $('confirm').close();
      exit('user_closed');
    });
    /* focus goes back to ✕ when the dialog closes without leaving */
    $('confirm').addEventListener('close', function () {
      if (!S.finished) $('close').focus();
    });
    /* a new connect link opened in this tab (same path, new #ticket=…)
     * is a fragment change, not a load: start again from it */
    w.addEventListener('hashchange', function () {
      if (/(^#|&)ticket=/.test(w.location.hash)) w.location.reload();
    });
    start();
  });
}(window));
