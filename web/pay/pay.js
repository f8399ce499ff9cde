/* The card page: {link_url}/pay?client_id=cli_…[&lang=es]#pay_token=bds_pay_…
 *
 * loading (GET /v1/pay-tokens/current with the pay token: the client, the
 * amount and the bill when the token names them) -> the card form -> card
 * saved (POST /v1/pay/payment-methods) or an error the user can act on.
 *
 * The pay token is read from the fragment (which never reaches a server),
 * taken off the address bar and history at once and kept in this closure
 * only. The card is read from the inputs when the form is sent and goes
 * nowhere but the request's JSON body to this origin (CSP connect-src
 * 'self'): never in a URL, a log, a message or any storage, and the
 * inputs are emptied once it is saved.
 *
 * The form is checked as the user goes and again before anything is sent:
 * the number's length and Luhn digit, the month, a 4-digit year (2 digits
 * are read as 20YY) not before the current month (UTC, as the API counts),
 * a 3 or 4 digit security code. Each error sits under its field and is
 * tied to it (aria-describedby, aria-invalid); the API's field errors are
 * shown the same way.
 *
 * Talking to the embedder: only the bds:payment_method message, only to
 * the window that framed the page (location.ancestorOrigins[0], else
 * document.referrer's origin) or opened it (document.referrer's origin),
 * and only with that origin as targetOrigin when it is one of the client's
 * allowed embed origins (from the token, never from the URL). Never '*'. */
(function (w) {
  'use strict';

  var BDS = w.BDS;
  var t = BDS.i18n.t;
  var BRANDS = ['visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb', 'unionpay'];
  /* the API's field names and the page's inputs */
  var FIELDS = {
    pan: 'card-number',
    expiry_month: 'exp-month',
    expiry_year: 'exp-year',
    cvv: 'cvv'
  };
  /* the API's field codes and the page's words for them */
  var CODES = {
    'card-number': { required: 'pay.number.missing', invalid_format: 'pay.number.length',
      luhn_check_failed: 'pay.number.luhn' },
    'exp-month': { required: 'pay.month.missing', out_of_range: 'pay.month.range',
      invalid_type: 'pay.month.range' },
    'exp-year': { required: 'pay.year.missing', invalid_format: 'pay.year.format',
      invalid_type: 'pay.year.format', card_expired: 'pay.year.expired' },
    cvv: { required: 'pay.cvv.missing', invalid_format: 'pay.cvv.format' }
  };
  var ORDER = ['card-number', 'exp-month', 'exp-year', 'cvv'];

  var S = {
    token: null,	/* the pay token, from the fragment */
    current: null,	/* the GET /v1/pay-tokens/current answer */
    target: null,	/* the embedder's window, when it may be told */
    targetOrigin: null,
    sending: false,
    touched: {},	/* fields the user has left once: checked as they type */
    marked: {}	/* each field's value when it was last marked right or wrong */
  };

  function $(id) { return document.getElementById(id); }

  /* ---- the API, same origin ---- */

  /* One call with the pay token: resolves to {status, body} (status 0 when
   * the network failed, body null when the answer is not JSON). */
  function call(method, path, body) {
    var headers = { Accept: 'application/json', Authorization: 'Bearer ' + S.token };
    var init = {
      method: method,
      headers: headers,
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error',
      referrerPolicy: 'no-referrer'
    };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return w.fetch(path, init).then(function (r) {
      return r.text().then(function (text) {
        var parsed = null;
        try { parsed = JSON.parse(text); } catch (e) { parsed = null; }
        return { status: r.status, body: parsed };
      });
    }, function () {
      return { status: 0, body: null };
    });
  }

  /* ---- screens ---- */

  function show(name, focus) {
    var sections = document.querySelectorAll('main > .screen');
    var i;
    for (i = 0; i < sections.length; i++) sections[i].hidden = sections[i].id !== 'screen-' + name;
    document.body.setAttribute('data-screen', name);
    var heading = $('screen-' + name).querySelector('h1');
    if (heading) document.title = heading.textContent + ' · ' + t('brand');
    (focus || heading || $('main')).focus();
  }

  function say(text) {
    /* re-set so that the same words are announced again */
    $('announce').textContent = '';
    w.setTimeout(function () { $('announce').textContent = text; }, 50);
  }

  function fail(kind, retry) {
    var title = 'pay.error_title.' + kind;
    $('error-title').textContent = BDS.i18n.has(title) ? t(title) : t('pay.error.title');
    $('error-body').textContent = t('pay.error.' + kind);
    $('error-retry').hidden = !retry;
    $('error-retry').onclick = retry || null;
    show('error');
  }

  /* ---- the embedder ---- */

  function originOf(url) {
    try {
      var o = new URL(url).origin;
      return o && o !== 'null' ? o : null;
    } catch (e) {
      return null;
    }
  }

  function chooseTarget(allowed) {
    var win = null;
    var origin = null;
    var anc = w.location.ancestorOrigins;
    if (w.parent !== w) {
      win = w.parent;
      origin = anc && anc.length ? anc[0] : originOf(document.referrer);
    } else if (w.opener) {
      win = w.opener;
      origin = originOf(document.referrer);
    }
    if (win !== null && origin && Array.isArray(allowed) && allowed.indexOf(origin) >= 0) {
      S.target = win;
      S.targetOrigin = origin;
    }
  }

  function tell(method) {
    if (S.target === null || S.targetOrigin === null) return;
    try {
      S.target.postMessage({
        type: 'bds:payment_method',
        payment_method_id: method.payment_method_id,
        last4: method.last4,
        brand: method.brand
      }, S.targetOrigin);
    } catch (e) { /* the window went away */ }
  }

  /* ---- the card's fields ---- */

  function digits(s) {
    return String(s || '').replace(/\D/g, '');
  }

  function luhn(pan) {
    var sum = 0;
    var dbl = false;
    var i, d;
    for (i = pan.length - 1; i >= 0; i--) {
      d = pan.charCodeAt(i) - 48;
      if (dbl) {
        d *= 2;
        if (d > 9) d -= 9;
      }
      sum += d;
      dbl = !dbl;
    }
    return sum % 10 === 0;
  }

  /* Groups of the number as printed: 4-6-5 for American Express (34, 37),
   * 4-6-4 for Diners Club's 14 digits, else fours. */
  function groups(pan) {
    if (/^3[47]/.test(pan)) return [4, 6, 5];
    if (/^3(?:0[0-5]|[689])/.test(pan) && pan.length <= 14) return [4, 6, 4];
    return [4, 4, 4, 4, 3];
  }

  function grouped(pan) {
    var g = groups(pan);
    var out = [];
    var at = 0;
    var i;
    for (i = 0; i < g.length && at < pan.length; i++) {
      out.push(pan.slice(at, at + g[i]));
      at += g[i];
    }
    if (at < pan.length) out.push(pan.slice(at));
    return out.join(' ');
  }

  /* Reformat the number as it is typed, keeping the caret after the same
   * digit. */
  function regroup() {
    var el = $('card-number');
    var caret = el.selectionStart === null ? el.value.length : el.selectionStart;
    var before = digits(el.value.slice(0, caret)).length;
    var pan = digits(el.value).slice(0, 19);
    var text = grouped(pan);
    var pos = 0;
    var seen = 0;
    if (text === el.value) return;
    el.value = text;
    while (pos < text.length && seen < before) {
      if (text.charAt(pos) !== ' ') seen++;
      pos++;
    }
    if (document.activeElement === el) el.setSelectionRange(pos, pos);
  }

  function nowUTC() {
    var d = new Date();
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1 };
  }

  function year4(v) {
    if (/^\d{2}$/.test(v)) return 2000 + Number(v);
    if (/^\d{4}$/.test(v)) return Number(v);
    return null;
  }

  /* The message key of a field's problem, or null when it is right. */
  function problem(id) {
    var raw = $(id).value.trim();
    var v, m, y, now;
    switch (id) {
    case 'card-number':
      if (raw === '') return 'pay.number.missing';
      if (!/^[\d -]+$/.test(raw)) return 'pay.number.length';
      v = digits(raw);
      if (v.length < 13 || v.length > 19) return 'pay.number.length';
      return luhn(v) ? null : 'pay.number.luhn';
    case 'exp-month':
      if (raw === '') return 'pay.month.missing';
      if (!/^\d{1,2}$/.test(raw) || Number(raw) < 1 || Number(raw) > 12) return 'pay.month.range';
      return null;
    case 'exp-year':
      if (raw === '') return 'pay.year.missing';
      y = year4(raw);
      if (y === null) return 'pay.year.format';
      m = $('exp-month').value.trim();
      if (!/^\d{1,2}$/.test(m) || Number(m) < 1 || Number(m) > 12) {
        /* no month yet: only a year before this one is known to be past */
        return y < nowUTC().year ? 'pay.year.expired' : null;
      }
      now = nowUTC();
      return y < now.year || (y === now.year && Number(m) < now.month) ? 'pay.year.expired' : null;
    case 'cvv':
      if (raw === '') return 'pay.cvv.missing';
      return /^\d{3,4}$/.test(raw) ? null : 'pay.cvv.format';
    }
    return null;
  }

  /* Show (text) or clear (null) the error of field id. */
  function mark(id, text) {
    var el = $(id);
    var err = $(id + '-error');
    var hint = $(id + '-hint');
    var by = [];
    if (hint) by.push(hint.id);
    S.marked[id] = el.value;
    err.textContent = text || '';
    err.hidden = !text;
    if (text) by.push(err.id);
    if (by.length) el.setAttribute('aria-describedby', by.join(' '));
    else el.removeAttribute('aria-describedby');
    el.setAttribute('aria-invalid', text ? 'true' : 'false');
  }

  function check(id) {
    var key = problem(id);
    mark(id, key ? t(key) : null);
    return key === null;
  }

  function formError(text) {
    $('form-error').textContent = text || '';
    $('form-error').hidden = !text;
  }

  /* ---- sending ---- */

  function busy(on) {
    S.sending = on;
    $('card-submit').disabled = on;
    $('card-submit').textContent = t(on ? 'pay.saving' : 'pay.submit');
    $('card-form').setAttribute('aria-busy', on ? 'true' : 'false');
  }

  function wipe() {
    ORDER.forEach(function (id) { $(id).value = ''; });
  }

  function brandName(brand) {
    return t('pay.brand.' + (BRANDS.indexOf(brand) >= 0 ? brand : 'unknown'));
  }

  function saved(method) {
    var words = { brand: brandName(method.brand), last4: String(method.last4 || '') };
    wipe();
    $('saved-body').textContent = t('pay.saved.body', words);
    tell(method);
    show('saved');
    say(t('pay.saved.announce', words));
  }

  /* The API's 400: each error under its field (the first one focused);
   * one the form has no field for, above the form. */
  function fieldErrors(errors) {
    var first = null;
    var other = false;
    (Array.isArray(errors) ? errors : []).forEach(function (e) {
      var id = e && FIELDS[e.field];
      if (!id) {
        other = true;
        return;
      }
      mark(id, t((CODES[id] && CODES[id][e.code]) || 'pay.field.other'));
      if (first === null || ORDER.indexOf(id) < ORDER.indexOf(first)) first = id;
    });
    formError(other || first === null ? t('pay.error.generic') : null);
    if (first !== null) $(first).focus();
    else $('form-error').focus();
  }

  function send() {
    var body = {
      pan: digits($('card-number').value),
      expiry_month: Number($('exp-month').value.trim()),
      expiry_year: year4($('exp-year').value.trim()),
      cvv: $('cvv').value.trim()
    };
    busy(true);
    formError(null);
    return call('POST', '/v1/pay/payment-methods', body).then(function (res) {
      var code = res.body && res.body.error_code;
      busy(false);
      if (res.status === 201 && res.body && res.body.payment_method_id) return saved(res.body);
      if (res.status === 401) {
        wipe();
        return fail(code === 'PAY_TOKEN_EXPIRED' ? 'expired' : 'invalid', null);
      }
      if (res.status === 400 && code === 'VALIDATION_ERROR') return fieldErrors(res.body.errors);
      formError(t(res.status === 0 ? 'pay.error.network' :
        res.status === 429 ? 'pay.error.rate_limited' : 'pay.error.generic'));
      $('form-error').focus();
    });
  }

  function submit(ev) {
    var bad = [];
    ev.preventDefault();
    if (S.sending) return;
    ORDER.forEach(function (id) {
      S.touched[id] = true;
      if (!check(id)) bad.push(id);
    });
    formError(null);
    if (bad.length) {
      say(bad.length === 1 ? t('pay.invalid_one') : t('pay.invalid_count', { count: bad.length }));
      $(bad[0]).focus();
      return;
    }
    send();
  }

  function wire() {
    ORDER.forEach(function (id) {
      var el = $(id);
      el.addEventListener('blur', function () {
        if (el.value.trim() !== '') S.touched[id] = true;
        /* a value left as it was keeps its mark (the API's too): the
         * form does not move under a click on Save */
        if (S.touched[id] && el.value !== S.marked[id]) check(id);
        /* the year's check reads the month */
        if (id === 'exp-month' && S.touched['exp-year']) check('exp-year');
      });
      el.addEventListener('input', function () {
        if (id === 'card-number') regroup();
        /* an error goes as soon as it is fixed; a new one waits for the blur */
        if (el.getAttribute('aria-invalid') === 'true') check(id);
        if (id === 'exp-month' && $('exp-year').getAttribute('aria-invalid') === 'true') {
          check('exp-year');
        }
      });
    });
    $('card-form').addEventListener('submit', submit);
  }

  /* ---- loading ---- */

  function money(amount) {
    var n = Number(amount && amount.value);
    if (!amount || !isFinite(n) || typeof amount.currency !== 'string') return null;
    try {
      return new Intl.NumberFormat(BDS.i18n.lang, { style: 'currency',
        currency: amount.currency }).format(n);
    } catch (e) {
      return String(amount.value) + ' ' + amount.currency;
    }
  }

  function day(iso) {
    var m = /^(\d{4})-(\d{2})-(\d{2})/.exec(String(iso || ''));
    if (!m) return null;
    try {
      return new Intl.DateTimeFormat(BDS.i18n.lang, { dateStyle: 'long', timeZone: 'UTC' })
        .format(new Date(Date.UTC(+m[1], +m[2] - 1, +m[3])));
    } catch (e) {
      return m[0];
    }
  }

  function row(name, text) {
    $('summary-' + name + '-row').hidden = !text;
    $('summary-' + name).textContent = text || '';
    return !!text;
  }

  function form(cur) {
    var bill = cur.bill || null;
    var any;
    BDS.i18n.set('client', cur.client.name || cur.client.id);
    $('form-client').textContent = t('pay.for_client');
    $('form-intro').textContent = t('pay.intro');
    $('form-secure').textContent = t('pay.secure');
    any = row('biller', bill && bill.biller_name);
    any = row('amount', money(cur.amount)) || any;
    any = row('due', bill && day(bill.due_date_iso)) || any;
    $('summary').hidden = !any;
    show('form');
  }

  function load(urlClient) {
    show('loading');
    return call('GET', '/v1/pay-tokens/current').then(function (res) {
      var code = res.body && res.body.error_code;
      if (res.status === 200 && res.body && res.body.client && res.body.client.id) {
        /* nginx framed the page for the URL's client: it must be the
         * token's, or another client's origins would hold the frame */
        if (urlClient !== null && urlClient !== res.body.client.id) {
          S.token = null;
          return fail('client_mismatch', null);
        }
        S.current = res.body;
        chooseTarget(res.body.client.allowed_embed_origins);
        return form(res.body);
      }
      if (res.status === 401) {
        S.token = null;
        return fail(code === 'PAY_TOKEN_EXPIRED' ? 'expired' : 'invalid', null);
      }
      return fail(res.status === 0 ? 'network' : 'load', function () { load(urlClient); });
    });
  }

  function start() {
    var params = new URLSearchParams(w.location.search);
    var frag = new URLSearchParams(w.location.hash.replace(/^#/, ''));
    var token = frag.get('pay_token');

    /* off the address bar and history before anything else runs */
    if (w.location.hash) w.history.replaceState(null, '', w.location.pathname + w.location.search);
    wire();
    BDS.i18n.load(params.get('lang') || navigator.language).then(function () {
      BDS.i18n.apply();
      document.title = t('pay.title') + ' · ' + t('brand');
      if (!token || !/^bds_pay_[0-9A-Za-z]+$/.test(token)) return fail('no_token', null);
      S.token = token;
      return load(params.get('client_id'));
    });
  }

  start();
}(window));
