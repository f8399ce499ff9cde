#!/usr/bin/python3
"""The hosted card page (/pay on the link host) in a real browser.

Run by t/e2e/check_e2e_pay_browser.c, one scenario per run:

    /usr/bin/python3 t/browser/pay_card.py SCENARIO

against the suite's stack. Debian's chromium, headless, through
chromium-driver and python3-selenium; stdlib otherwise. The script serves
a test app (a page of its own, below: it frames the card page or opens
it in a popup and records every message it receives) on two fresh
loopback ports and registers the first as the client's allowed origin,
as the developer would. It plays the end user (keyboard only where the
scenario says so) and the client's backend (pay tokens and the list of
payment methods, with the sandbox key), saves a screenshot of each screen
under BDS_ARTIFACTS and writes what the C suite checks afterwards (client
user ids, payment method ids, the cards typed) to BDS_RESULT as JSON.

Every scenario checks the browser's console (no Content-Security-Policy
or integrity refusal, no uncaught error) and the network log (no request
to a host other than the link host and the test app), except where the
refusal is the point (not_allowed). axe_en and axe_es run axe-core
(tools/npm/node_modules/axe-core) on every screen of the page.

Environment: BDS_API_URL (the sandbox host), BDS_IAM_URL (the api host),
BDS_LINK_URL, BDS_KEY, BDS_CLIENT, BDS_OTHER_CLIENT, BDS_JWT (the
developer's access token), BDS_EXPIRED_TOKEN (a pay token the suite has
aged past its expiry), BDS_BILL_ID and BDS_BILL_BILLER (a bill of
client_user_id pay-bill, 43.21 owed by 2030-06-15, and its biller's
name), BDS_ARTIFACTS, BDS_RESULT; BDS_NPM_MODULES (default
the tree's tools/npm/node_modules). Exit 0 when the scenario passed, 1
when it failed (the reason on stderr), 77 when chromium is not installed.
"""

import datetime
import http.server
import json
import os
import re
import sys
import threading
import time
import urllib.parse

from browserlib import (Browser as BaseBrowser, By, Keys, api_request, axe_check, check,
                        run)

ENV = os.environ
API = ENV['BDS_API_URL']
LINK = ENV['BDS_LINK_URL']
KEY = ENV['BDS_KEY']
CLIENT = ENV['BDS_CLIENT']
OTHER_CLIENT = ENV.get('BDS_OTHER_CLIENT', '')
JWT = ENV['BDS_JWT']
EXPIRED_TOKEN = ENV.get('BDS_EXPIRED_TOKEN', '')
# a PENDING bill of pay-bill (43.21 owed by 2030-06-15) and its biller
BILL = ENV.get('BDS_BILL_ID', '')
BILLER = ENV.get('BDS_BILL_BILLER', '')
ARTIFACTS = ENV['BDS_ARTIFACTS']
RESULT = ENV['BDS_RESULT']
# the test app's two origins (serve_app): registered, and not
ORIGIN_OK = ORIGIN_OTHER = None
PAY_TOKEN = re.compile(r'bds_pay_')
# the test cards (docs/pay.md) and the year of a card that is still valid
VISA = '4242424242424242'
MASTERCARD = '5555555555554444'
AMEX = '378282246310005'
DISCOVER = '6011111111111117'
VISA2 = '4000056655665556'
BAD_LUHN = '4242424242424241'
YEAR = str(datetime.datetime.now(datetime.timezone.utc).year + 3)


# ---- the client's backend: the API with the sandbox key -------------------

def api(method, path, body=None, bearer=KEY, base=API):
    return api_request(base, method, path, body, bearer)


def pay_token(user, **extra):
    """POST /v1/pay-tokens: the token and the page's URL for CLIENT."""
    body = {'client_user_id': user}
    body.update(extra)
    status, out = api('POST', '/v1/pay-tokens', body)
    check(status == 201 and out['pay_token'].startswith('bds_pay_'),
          'pay token: %s %s' % (status, out))
    return out['pay_token'], page_url(out['pay_token'])


def page_url(token, client=None):
    # a fresh query each time: a URL that differs only in its fragment
    # would not load the page again
    return '%s/pay?client_id=%s&run=%d#pay_token=%s' % (LINK, client or CLIENT,
                                                       time.monotonic_ns(), token)


def pay_session(user):
    """POST /v1/pay/sessions: the URL it answers, checked for its shape."""
    status, out = api('POST', '/v1/pay/sessions', {'client_user_id': user})
    check(status == 201, 'pay session: %s %s' % (status, out))
    url = out['url']
    check(url.startswith(LINK + '/pay?client_id=' + CLIENT + '#pay_token=bds_pay_'),
          'session url %s' % url)
    return url


def methods(user):
    """GET /v1/pay/payment-methods of user: their ids, newest first."""
    status, out = api('GET', '/v1/pay/payment-methods?client_user_id=' +
                      urllib.parse.quote(user))
    check(status == 200, 'payment methods: %s %s' % (status, out))
    return [m['payment_method_id'] for m in out['payment_methods']]


# ---- the test app on two origins ------------------------------------------

APP_HTML = b"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Pay test app</title>
<link rel="icon" href="data:,">
</head>
<body>
<main>
  <h1>Pay test app</h1>
  <p>A client's page that frames the card page or opens it (t/browser/pay_card.py).</p>
  <button type="button" id="open">Add a card</button>
  <pre id="log">[]</pre>
</main>
<script>
(function () {
  'use strict';
  var p = new URLSearchParams(location.hash.replace(/^#/, ''));
  window.bdsLog = [];
  window.addEventListener('message', function (e) {
    window.bdsLog.push({ origin: e.origin, data: e.data,
      from_popup: !!(window.bdsPopup && e.source === window.bdsPopup),
      from_frame: !!(document.getElementById('payframe') &&
        e.source === document.getElementById('payframe').contentWindow) });
    document.getElementById('log').textContent = JSON.stringify(window.bdsLog);
  });
  document.getElementById('open').addEventListener('click', function () {
    if (p.get('mode') === 'popup') {
      window.bdsPopup = window.open(p.get('url'), 'bdspay', 'popup,width=480,height=760');
      return;
    }
    var f = document.createElement('iframe');
    f.id = 'payframe';
    f.title = 'Add a card';
    f.width = 480;
    f.height = 820;
    f.src = p.get('url');
    document.querySelector('main').appendChild(f);
  });
}());
</script>
</body>
</html>
"""


class App(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if urllib.parse.urlsplit(self.path).path != '/app.html':
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header('Content-Type', 'text/html; charset=utf-8')
        self.send_header('Content-Length', str(len(APP_HTML)))
        self.send_header('Cache-Control', 'no-store')
        self.end_headers()
        self.wfile.write(APP_HTML)


def serve_app():
    """The test app on two fresh loopback ports; the first becomes the
    client's allowed origin (PUT /v1/iam/clients/{id}, as the developer)."""
    global ORIGIN_OK, ORIGIN_OTHER
    servers = []
    for _ in range(2):
        s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), App)
        threading.Thread(target=s.serve_forever, daemon=True).start()
        servers.append(s)
    ORIGIN_OK, ORIGIN_OTHER = ('http://127.0.0.1:%d' % s.server_address[1] for s in servers)
    status, out = api('PUT', '/v1/iam/clients/' + CLIENT, {'allowedOrigins': [ORIGIN_OK]},
                      bearer=JWT, base=ENV['BDS_IAM_URL'])
    check(status == 200, 'registering the test app: %s %s' % (status, out))
    return servers


def app_url(origin, url, mode='iframe'):
    # a fresh query each time: a URL that differs only in its fragment
    # would not load the app again
    return '%s/app.html?run=%d#%s' % (origin, time.monotonic_ns(),
                                       urllib.parse.urlencode({'url': url, 'mode': mode}))


# ---- the browser ------------------------------------------------------------

class Browser(BaseBrowser):
    def __init__(self, scenario, width=900, height=1000, lang=None):
        super().__init__(scenario, ARTIFACTS, LINK, shot_prefix='pay-', width=width,
                         height=height, lang=lang, extra_args=('--disable-popup-blocking',))

    def sent(self, method, path):
        """The requests so far of method to the link host's path."""
        self.drain()
        return [u for m, u in self.requests if m == method and u.split('?')[0] == LINK + path]

    def assert_clean(self, origins):
        """BaseBrowser's, and no card number in a URL or the console."""
        super().assert_clean(origins)
        cards = (VISA, MASTERCARD, AMEX, DISCOVER, VISA2, BAD_LUHN)
        leaked = [u for u in self.urls() if any(c in re.sub(r'\D', '', u) for c in cards)]
        check(not leaked, 'a card number in a URL: %s' % leaked)
        logged = [m['message'] for m in self.console
                  if any(c in re.sub(r'\D', '', m['message']) for c in cards)]
        check(not logged, 'a card number in the console: %s' % logged)


# ---- steps of the page --------------------------------------------------------

def open_app(b, origin, url, mode='iframe'):
    """The test app on origin opens url (a click: a user gesture). iframe
    mode: the iframe element; popup: the app's window handle (the popup is
    then the other one)."""
    b.get(app_url(origin, url, mode))
    main = b.d.current_window_handle
    b.click('#open')
    if mode == 'popup':
        b.wait(lambda: len(b.d.window_handles) == 2, 'the popup')
        return main
    return b.wait(lambda: b.d.find_elements(By.TAG_NAME, 'iframe'), 'the iframe')[0]


def popup_handle(b, main):
    return [h for h in b.d.window_handles if h != main][0]


def form_ready(b):
    b.screen('form')
    # the page's own address (in a frame, current_url is the app's)
    here = b.js('return location.href')
    check(not PAY_TOKEN.search(here), 'the pay token stayed in the URL: %s' % here)
    check(b.js('return location.hash') == '', 'a fragment is left: %s' % here)


def fields_as_specified(b):
    """Labels, autocomplete and input modes of every field."""
    want = {'card-number': 'cc-number', 'exp-month': 'cc-exp-month', 'exp-year': 'cc-exp-year',
            'cvv': 'cc-csc'}
    for id_, ac in want.items():
        e = b.el('#' + id_)
        check(e.get_attribute('autocomplete') == ac, '%s autocomplete %s' %
              (id_, e.get_attribute('autocomplete')))
        check(e.get_attribute('inputmode') == 'numeric', '%s inputmode' % id_)
        check(b.js('return document.getElementById(arguments[0]).labels.length', id_) == 1,
              '%s has no label' % id_)
        check(not e.get_attribute('name'), '%s has a name: a form submission could send it' % id_)
    check(b.js("return [...document.querySelectorAll('input')].every(i => i.labels.length > 0)"),
          'an input without a label')


def type_card(b, pan, month, year, cvv, submit=True, keyboard=True):
    """Fill the form from the heading: Tab to each field and type, Enter
    to send (keyboard), or click into each field (not keyboard)."""
    if keyboard:
        check(b.active_id() == 'form-title', 'focus %s' % b.active_id())
        b.keys(Keys.TAB)
        for id_, text in (('card-number', pan), ('exp-month', month), ('exp-year', year),
                          ('cvv', cvv)):
            check(b.active_id() == id_, 'focus %s, not %s' % (b.active_id(), id_))
            # the focused field shows it (a visible outline)
            check(b.js("const s = getComputedStyle(document.activeElement);"
                       "return s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2"),
                  'no visible focus on %s' % id_)
            b.keys(text)
            if id_ != 'cvv':
                b.keys(Keys.TAB)
        if submit:
            b.keys(Keys.ENTER)
        return
    for id_, text in (('card-number', pan), ('exp-month', month), ('exp-year', year),
                      ('cvv', cvv)):
        e = b.el('#' + id_)
        e.clear()
        e.send_keys(text)
    if submit:
        b.click('#card-submit')


def message_of(log, origin=None):
    return [m for m in log if isinstance(m.get('data'), dict) and
            m['data'].get('type') == 'bds:payment_method' and (origin is None or
                                                                m['origin'] == origin)]


def sentinel(b):
    """From the page's window (the current one): a message to its opener,
    after anything the page itself posted. Messages from one window to
    another arrive in order, so once the sentinel is in the app's log,
    anything the page posted before it would be there too."""
    b.js("window.opener.postMessage({type: 'test:sentinel'}, '*')")


def saved_method(b, user, pan):
    """The saved screen after a submit; the method listed for user."""
    b.screen('saved')
    check(b.text('#saved-body').find(pan[-4:]) >= 0, 'saved body %s' % b.text('#saved-body'))
    check(b.active_id() == 'saved-title', 'focus %s' % b.active_id())
    check(all(b.value('#' + i) == '' for i in ('card-number', 'exp-month', 'exp-year', 'cvv')),
          'the inputs still hold the card')
    got = methods(user)
    check(len(got) >= 1, 'no payment method listed for %s' % user)
    return got[0]


# ---- scenarios ---------------------------------------------------------------

def embedded(b):
    """Framed by the registered origin, keyboard only: the card saved,
    bds:payment_method at the test app, the method listed."""
    user = 'pay-embedded'
    url = pay_session(user)
    frame = open_app(b, ORIGIN_OK, url)
    b.d.switch_to.frame(frame)
    form_ready(b)
    fields_as_specified(b)
    check(b.js('return document.documentElement.lang') == 'en', 'lang')
    b.shot('form')
    type_card(b, VISA, '12', YEAR, '123', submit=False)
    check(b.value('#card-number') == '4242 4242 4242 4242', 'grouping: %r' %
          b.value('#card-number'))
    b.keys(Keys.ENTER)
    pm = saved_method(b, user, VISA)
    b.shot('saved')
    check(b.text('#saved-body') == 'Your Visa card ending in 4242 is saved. You can close this '
          'window.', b.text('#saved-body'))
    check(b.wait(lambda: b.text('#announce'), 'the announcement').startswith('Card saved'),
          'announce %s' % b.text('#announce'))
    b.d.switch_to.default_content()
    got = b.wait(lambda: message_of(b.app_log()), 'bds:payment_method at the test app')
    check(len(got) == 1, 'messages %s' % got)
    m = got[0]
    check(m['origin'] == LINK and m['from_frame'], 'from %s' % m)
    check(sorted(m['data']) == ['brand', 'last4', 'payment_method_id', 'type'], 'keys %s' % m)
    check(m['data']['payment_method_id'] == pm and pm.startswith('pm_'), 'id %s, listed %s' %
          (m['data'], pm))
    check(m['data']['last4'] == '4242' and m['data']['brand'] == 'visa', 'message %s' % m)
    check(VISA not in json.dumps(b.app_log()), 'the card reached the embedder')
    check(len(b.sent('POST', '/v1/pay/payment-methods')) == 1, 'not one POST')
    b.assert_clean([LINK, ORIGIN_OK])
    return {'users': [user], 'methods': [pm], 'cards': [VISA], 'cvvs': ['123']}


def amount(b):
    """A token with an amount, Mastercard typed with the mouse and the
    keyboard mixed, 4-digit CVV: the summary shows the amount."""
    user = 'pay-amount'
    _, url = pay_token(user, amount={'value': 4201, 'currency': 'USD'})
    frame = open_app(b, ORIGIN_OK, url)
    b.d.switch_to.frame(frame)
    form_ready(b)
    check(b.visible('#summary') and b.text('#summary-amount') == '$42.01',
          'amount %s' % b.text('#summary-amount'))
    check(not b.visible('#summary-biller-row'), 'a biller without a bill')
    type_card(b, AMEX, '1', YEAR[2:], '4321', keyboard=False, submit=False)
    check(b.value('#card-number') == '3782 822463 10005', 'amex grouping %r' %
          b.value('#card-number'))
    b.shot('filled')
    b.click('#card-submit')
    pm = saved_method(b, user, AMEX)
    check('American Express' in b.text('#saved-body'), b.text('#saved-body'))
    b.d.switch_to.default_content()
    got = b.wait(lambda: message_of(b.app_log()), 'bds:payment_method')
    check(got[0]['data']['brand'] == 'amex' and got[0]['data']['last4'] == '0005' and
          got[0]['data']['payment_method_id'] == pm, 'message %s' % got)
    b.assert_clean([LINK, ORIGIN_OK])
    return {'users': [user], 'methods': [pm], 'cards': [AMEX], 'cvvs': ['4321']}


def bill(b):
    """A token for a bill: the biller, what is owed and the due date
    above the form; the card saved for the bill's user."""
    user = 'pay-bill'
    check(BILL and BILLER, 'no bill from the suite')
    _, url = pay_token(user, bill_id=BILL)
    frame = open_app(b, ORIGIN_OK, url)
    b.d.switch_to.frame(frame)
    form_ready(b)
    check(b.text('#summary-biller') == BILLER, 'biller %r, want %r' %
          (b.text('#summary-biller'), BILLER))
    check(b.text('#summary-amount') == '$43.21', 'amount %r' % b.text('#summary-amount'))
    check(b.text('#summary-due') == 'June 15, 2030', 'due %r' % b.text('#summary-due'))
    b.shot('form')
    type_card(b, VISA2, '03', YEAR, '123')
    pm = saved_method(b, user, VISA2)
    b.d.switch_to.default_content()
    got = b.wait(lambda: message_of(b.app_log()), 'bds:payment_method')
    check(got[0]['data']['payment_method_id'] == pm, 'message %s' % got)
    b.assert_clean([LINK, ORIGIN_OK])
    return {'users': [user], 'methods': [pm], 'cards': [VISA2], 'cvvs': ['123']}


def not_allowed(b):
    """Framed by an origin the client did not register: the browser
    refuses the frame; the page never ran (no script, no API call)."""
    user = 'pay-not-allowed'
    url = pay_session(user)
    frame = open_app(b, ORIGIN_OTHER, url)
    b.wait(lambda: any('frame-ancestors' in m['message'] for m in b.d.get_log('browser')),
           'the browser to refuse the frame')
    # the document's request was made (and refused): nothing it would load
    b.wait(lambda: b.sent('GET', '/pay'), 'the request for /pay')
    b.shot('not-framed')
    b.d.switch_to.frame(frame)
    check(b.screen_now() is None, 'the page rendered in the frame')
    check(not b.d.find_elements(By.CSS_SELECTOR, '#card-form'), 'a form in the frame')
    b.d.switch_to.default_content()
    check(b.sent('GET', '/pay/pay.js') == [] and b.sent('GET', '/v1/pay-tokens/current') == [],
          'the refused page loaded its script or called the API')
    check(message_of(b.app_log()) == [], 'the page talked: %s' % b.app_log())
    # the same URL framed by the registered origin renders: the refusal
    # above is the origin's
    frame = open_app(b, ORIGIN_OK, url)
    b.d.switch_to.frame(frame)
    form_ready(b)
    b.d.switch_to.default_content()
    return {'users': [user], 'methods': [], 'cards': [], 'cvvs': []}


def popups(b):
    """In a popup: opened by the registered origin, the opener gets the
    message; opened by the other origin, nothing (not a registered
    origin); opened by the registered origin whose window then goes to
    the other origin, nothing (the page posts to the registered origin
    only, never '*'). A sentinel from the popup after each save shows
    the app's log is complete."""
    out = {'users': [], 'methods': [], 'cards': [], 'cvvs': []}

    def run(user, opener, then_to, pan, cvv):
        url = pay_session(user)
        main = open_app(b, opener, url, mode='popup')
        if then_to:
            b.get(app_url(then_to, 'about:blank'))
            b.wait(lambda: b.js('return location.origin') == then_to, 'the opener moved')
        b.d.switch_to.window(popup_handle(b, main))
        form_ready(b)
        b.el('#form-title')
        type_card(b, pan, '08', YEAR, cvv)
        pm = saved_method(b, user, pan)
        sentinel(b)
        b.shot('saved-' + user)
        b.d.close()
        b.d.switch_to.window(main)
        b.wait(lambda: [m for m in b.app_log() if m['data'] == {'type': 'test:sentinel'}],
               'the sentinel')
        out['users'].append(user)
        out['methods'].append(pm)
        out['cards'].append(pan)
        out['cvvs'].append(cvv)
        return pm, message_of(b.app_log())

    pm, got = run('pay-popup-ok', ORIGIN_OK, None, MASTERCARD, '123')
    check(len(got) == 1 and got[0]['origin'] == LINK and got[0]['from_popup'] and
          got[0]['data']['payment_method_id'] == pm and got[0]['data']['brand'] == 'mastercard',
          'the registered opener: %s' % b.app_log())
    pm, got = run('pay-popup-other', ORIGIN_OTHER, None, DISCOVER, '123')
    check(got == [], 'an opener the client did not register got %s' % got)
    pm, got = run('pay-popup-moved', ORIGIN_OK, ORIGIN_OTHER, VISA2, '4321')
    check(got == [], 'the opener, now on another origin, got %s' % got)
    b.assert_clean([LINK, ORIGIN_OK, ORIGIN_OTHER])
    return out


def inline_errors(b):
    """320 px wide: a bad Luhn digit, a past expiry, a short number and
    CVV: each error under its field, tied to it, no request, nothing
    wider than the screen; fixed, one request."""
    user = 'pay-inline'
    _, url = pay_token(user)
    b.get(url)
    form_ready(b)
    this_year = datetime.datetime.now(datetime.timezone.utc).year
    type_card(b, BAD_LUHN, '01', str(this_year - 1), '12')
    b.wait(lambda: b.el('#card-number').get_attribute('aria-invalid') == 'true',
           'the number marked')
    want = {
        'card-number': 'This card number is not valid. Check the digits.',
        'exp-year': 'This card has expired. Use a card that is still valid.',
        'cvv': 'Enter the 3 or 4 digits of the security code.',
    }
    for id_, text in want.items():
        check(b.el('#' + id_).get_attribute('aria-invalid') == 'true', '%s not invalid' % id_)
        check(b.text('#%s-error' % id_) == text, '%s: %r' % (id_, b.text('#%s-error' % id_)))
        check(('%s-error' % id_) in b.el('#' + id_).get_attribute('aria-describedby').split(),
              '%s: the error is not tied to it' % id_)
    check(b.el('#exp-month').get_attribute('aria-invalid') == 'false', 'month marked')
    check(not b.visible('#exp-month-error'), 'a month error')
    check(b.active_id() == 'card-number', 'focus %s: not the first error' % b.active_id())
    b.wait(lambda: 'need a change' in b.text('#announce'), 'the count announced')
    check(b.js('return window.innerWidth') <= 340, 'viewport %s' % b.js('return window.innerWidth'))
    check(b.js('return document.documentElement.scrollWidth <= window.innerWidth'),
          'the form with its errors scrolls sideways at %s px' % b.js('return window.innerWidth'))
    b.shot('errors')
    check(b.sent('POST', '/v1/pay/payment-methods') == [], 'a request with errors in the form')

    # the month alone makes this year's card past: its month
    b.el('#exp-year').clear()
    b.el('#exp-year').send_keys(str(this_year))
    now_month = datetime.datetime.now(datetime.timezone.utc).month
    if now_month > 1:
        b.el('#cvv').click()
        check(b.text('#exp-year-error').startswith('This card has expired'),
              'month %s of this year: %r' % ('01', b.text('#exp-year-error')))
    # a short number
    b.el('#card-number').clear()
    b.el('#card-number').send_keys('4242 4242')
    b.el('#cvv').click()
    check(b.text('#card-number-error') == 'Enter the whole card number: 13 to 19 digits.',
          b.text('#card-number-error'))
    check(b.sent('POST', '/v1/pay/payment-methods') == [], 'a request while typing')

    # fixed: the errors go as the fields are put right, then one request
    b.el('#card-number').clear()
    b.el('#card-number').send_keys(VISA)
    check(b.el('#card-number').get_attribute('aria-invalid') == 'false' and
          not b.visible('#card-number-error'), 'the number error stayed')
    b.el('#exp-year').clear()
    b.el('#exp-year').send_keys(YEAR)
    b.el('#cvv').clear()
    b.el('#cvv').send_keys('123')
    check(b.el('#cvv').get_attribute('aria-describedby') == 'cvv-hint', 'cvv described by %s' %
          b.el('#cvv').get_attribute('aria-describedby'))
    b.click('#card-submit')
    pm = saved_method(b, user, VISA)
    check(len(b.sent('POST', '/v1/pay/payment-methods')) == 1, 'not one POST after the fix')
    b.assert_clean([LINK])
    return {'users': [user], 'methods': [pm], 'cards': [VISA, BAD_LUHN], 'cvvs': ['123']}


# The page's POST altered on its way out (its checks passed): the body
# and the bearer the test puts in window.bdsAlter, so that the real API
# answers what the page could not have caught itself
ALTER_JS = """
const real = window.fetch.bind(window);
window.fetch = function (url, init) {
  const alter = window.bdsAlter;
  if (alter && String(url).endsWith('/v1/pay/payment-methods') && init && init.body) {
    const body = JSON.parse(init.body);
    Object.assign(body, alter.body || {});
    init = Object.assign({}, init, {body: JSON.stringify(body)});
    if (alter.bearer) init.headers = Object.assign({}, init.headers,
      {Authorization: 'Bearer ' + alter.bearer});
  }
  return real(url, init);
};
"""


def api_errors(b):
    """The API's own answers to a sent card: its field errors under the
    fields (the first focused), a pay token it no longer takes on the
    error screen, the form gone."""
    user = 'pay-api-errors'
    _, url = pay_token(user)
    b.get(url)
    form_ready(b)
    b.js(ALTER_JS)
    b.js("window.bdsAlter = {body: {expiry_month: 13}}")
    type_card(b, VISA, '12', YEAR, '123')
    b.wait(lambda: b.el('#exp-month').get_attribute('aria-invalid') == 'true',
           "the API's month error")
    check(b.text('#exp-month-error') == 'Enter the month as a number from 01 to 12.',
          b.text('#exp-month-error'))
    check('exp-month-error' in b.el('#exp-month').get_attribute('aria-describedby').split(),
          'the API error not tied to its field')
    check(b.el('#card-number').get_attribute('aria-invalid') == 'false', 'the number marked')
    check(b.active_id() == 'exp-month', 'focus %s' % b.active_id())
    check(len(b.sent('POST', '/v1/pay/payment-methods')) == 1, 'not one POST')
    b.js("window.bdsAlter = {body: {cvv: '12a'}}")
    b.click('#card-submit')
    b.wait(lambda: b.el('#cvv').get_attribute('aria-invalid') == 'true', "the API's CVV error")
    check(b.text('#cvv-error') == 'Enter the 3 or 4 digits of the security code.',
          b.text('#cvv-error'))
    check(b.el('#exp-month').get_attribute('aria-invalid') == 'false', 'the month still marked')
    check(b.active_id() == 'cvv', 'focus %s' % b.active_id())
    check(len(b.sent('POST', '/v1/pay/payment-methods')) == 2, 'not two POSTs')
    b.shot('api-field-errors')
    # a token the API does not know: the link's error screen
    b.js("window.bdsAlter = {bearer: 'bds_pay_' + 'C'.repeat(49)}")
    b.click('#card-submit')
    b.screen('error')
    check(b.text('#error-title') == 'Link not valid', b.text('#error-title'))
    check(not b.visible('#error-retry'), 'a retry with a dead token')
    check(b.js("return [...document.querySelectorAll('input')].every(i => i.value === '')"),
          'the card stayed in the inputs')
    b.shot('api-invalid-token')
    check(methods(user) == [], 'a method was saved')
    b.assert_clean([LINK])
    return {'users': [user], 'methods': [], 'cards': [VISA], 'cvvs': ['123', '12a']}


def refused(b):
    """The page's error screens: no token, an unknown one, an expired one
    (the suite aged it), a token of another client than the URL's."""
    b.get('%s/pay?client_id=%s&run=%d' % (LINK, CLIENT, time.monotonic_ns()))
    b.screen('error')
    check(b.text('#error-title') == 'Link missing', b.text('#error-title'))
    b.shot('no-token')
    b.get(page_url('bds_pay_' + 'A' * 49))
    b.screen('error')
    check(b.text('#error-title') == 'Link not valid', b.text('#error-title'))
    check(EXPIRED_TOKEN.startswith('bds_pay_'), 'no expired token from the suite')
    b.get(page_url(EXPIRED_TOKEN))
    b.screen('error')
    check(b.text('#error-title') == 'Link expired', b.text('#error-title'))
    check('15 minutes' in b.text('#error-body'), b.text('#error-body'))
    b.shot('expired')
    check(not b.visible('#card-form'), 'a form on the error screen')
    check(OTHER_CLIENT.startswith('cli_'), 'no other client')
    _, url = pay_token('pay-refused')
    token = url.split('#pay_token=')[1]
    b.get(page_url(token, client=OTHER_CLIENT))
    b.screen('error')
    check(b.text('#error-title') == 'Opened for another app', b.text('#error-title'))
    b.shot('client-mismatch')
    check(b.sent('POST', '/v1/pay/payment-methods') == [], 'a card sent')
    b.assert_clean([LINK])
    return {'users': ['pay-refused'], 'methods': [], 'cards': [], 'cvvs': []}


def spanish(b):
    """A browser in es-MX: the es catalog, its errors, the saved screen;
    ?lang=en wins over the browser's language."""
    user = 'pay-es'
    _, url = pay_token(user, amount={'value': 1234, 'currency': 'USD'})
    b.get(url)
    form_ready(b)
    check(b.js('return document.documentElement.lang') == 'es', 'lang %s' %
          b.js('return document.documentElement.lang'))
    check(b.text('label[for=card-number]') == 'Número de tarjeta', b.text('label[for=card-number]'))
    check(b.text('#card-submit') == 'Guardar tarjeta', b.text('#card-submit'))
    check(b.text('#form-title') == 'Agregar una tarjeta', b.text('#form-title'))
    check(b.text('#summary-amount').replace('\u00a0', ' ') in ('12,34 US$', 'USD 12.34',
                                                                 'US$12.34', '12.34 US$',
                                                                 'US$ 12.34', 'USD 12,34'),
          'amount %r' % b.text('#summary-amount'))
    type_card(b, BAD_LUHN, '12', YEAR, '123')
    b.wait(lambda: b.visible('#card-number-error'), 'the error')
    check(b.text('#card-number-error') == 'Este número de tarjeta no es válido. Revisa los dígitos.',
          b.text('#card-number-error'))
    b.shot('error')
    b.el('#card-number').clear()
    b.el('#card-number').send_keys(VISA)
    b.click('#card-submit')
    pm = saved_method(b, user, VISA)
    check(b.text('#saved-title') == 'Tarjeta guardada', b.text('#saved-title'))
    check(b.text('#saved-body') == 'Tu tarjeta Visa terminada en 4242 está guardada. Ya puedes '
          'cerrar esta ventana.', b.text('#saved-body'))
    b.shot('saved')
    # ?lang=en over the browser's es
    _, url = pay_token(user)
    b.get(url.replace('#', '&lang=en#'))
    form_ready(b)
    check(b.js('return document.documentElement.lang') == 'en', 'lang with ?lang=en')
    check(b.text('#card-submit') == 'Save card', b.text('#card-submit'))
    b.assert_clean([LINK])
    return {'users': [user], 'methods': [pm], 'cards': [VISA, BAD_LUHN], 'cvvs': ['123']}


# ---- axe-core on every screen ----------------------------------------------------

def axe_walk(b, lang):
    """The form (with a summary), its errors, saved, an error screen."""
    seen = []
    user = 'pay-axe-' + lang
    _, url = pay_token(user, amount={'value': 999, 'currency': 'USD'})
    b.get(url)
    form_ready(b)
    check(b.js('return document.documentElement.lang') == lang, 'lang %s' %
          b.js('return document.documentElement.lang'))
    axe_check(b, 'form', seen)
    type_card(b, BAD_LUHN, '13', '20', '1')
    b.wait(lambda: b.visible('#card-number-error'), 'the errors')
    axe_check(b, 'form-errors', seen)
    type_card(b, MASTERCARD, '02', YEAR, '123', keyboard=False)
    pm = saved_method(b, user, MASTERCARD)
    axe_check(b, 'saved', seen)
    b.get(page_url('bds_pay_' + 'B' * 49))
    b.screen('error')
    axe_check(b, 'error', seen)
    b.assert_clean([LINK])
    return {'users': [user], 'methods': [pm], 'cards': [MASTERCARD, BAD_LUHN],
            'cvvs': ['123'], 'screens_checked': seen}


def axe_en(b):
    return axe_walk(b, 'en')


def axe_es(b):
    return axe_walk(b, 'es')


SCENARIOS = {
    'embedded': (embedded, {}),
    'amount': (amount, {}),
    'bill': (bill, {}),
    'not_allowed': (not_allowed, {}),
    'popups': (popups, {}),
    'inline_errors': (inline_errors, {'width': 320, 'height': 720}),
    'api_errors': (api_errors, {}),
    'refused': (refused, {}),
    'es': (spanish, {'lang': 'es-MX'}),
    'axe_en': (axe_en, {'lang': 'en'}),
    'axe_es': (axe_es, {'lang': 'es'}),
}


def main():
    return run('pay_card.py', SCENARIOS, serve_app, lambda name, opts: Browser(name, **opts))


if __name__ == '__main__':
    sys.exit(main())
