#!/usr/bin/python3
"""The connect page in a real browser.

Run by t/e2e/check_e2e_browser.c, one scenario per run:

    /usr/bin/python3 t/browser/connect_flows.py SCENARIO

against the suite's stack. Debian's chromium, headless, through
chromium-driver and python3-selenium; stdlib otherwise. The script serves
the test app (t/browser/site/) itself on two fresh loopback ports and
registers the first as the client's allowed origin (its linked.html as the
redirect URI), as the developer would. It plays the end user (and, for the
API calls a client's backend makes, the backend with the sandbox key),
checks what the user sees and what the embedding page receives, saves a
screenshot of each screen under BDS_ARTIFACTS, and writes what the C suite
checks afterwards (link tokens, link ids, messages) to BDS_RESULT as JSON.

Every scenario but not_allowed also checks the browser's console: no
Content-Security-Policy violation and no uncaught error; and the network
log: no request to a host other than the link host and the test app.
axe_en and axe_es run axe-core (tools/npm/node_modules/axe-core, injected
with execute_script) on every screen of the page and fail on any violation.

Environment: BDS_API_URL (the sandbox host), BDS_IAM_URL (the api host),
BDS_LINK_URL, BDS_KEY, BDS_CLIENT, BDS_OTHER_CLIENT, BDS_JWT (the
developer's access token, to register the test app's origin), BDS_SITE,
BDS_ARTIFACTS, BDS_RESULT; BDS_NPM_MODULES (default the tree's
tools/npm/node_modules). Exit 0 when the scenario passed, 1 when it
failed (the reason on stderr), 77 when chromium is not installed.
"""

import functools
import http.server
import json
import os
import re
import sys
import threading
import time
import urllib.parse

from browserlib import (WAIT, Browser as BaseBrowser, By, Keys, api_request, axe_check,
                        check, run)

ENV = os.environ
API = ENV['BDS_API_URL']
LINK = ENV['BDS_LINK_URL']
KEY = ENV['BDS_KEY']
CLIENT = ENV['BDS_CLIENT']
OTHER_CLIENT = ENV.get('BDS_OTHER_CLIENT', '')
JWT = ENV['BDS_JWT']
SITE = ENV['BDS_SITE']
ARTIFACTS = ENV['BDS_ARTIFACTS']
RESULT = ENV['BDS_RESULT']
# the test app's two origins (serve_site): registered, and not
ORIGIN_OK = ORIGIN_OTHER = REDIRECT = None
SANDBOX_BILLER = 'blr_01900000-0000-7000-8000-000000000001'
# a sandbox biller that gives bills and usage only (check_e2e_browser adds it)
SCOPED_BILLER = 'blr_01900000-0000-7000-8000-0000000000aa'
SCOPED_NAME = 'Sandbox Scoped Sewer'
# a biller website the stack's resolver calls public (check_e2e_browser)
REQUEST_HOST = 'www.newco-power.example'
SECRET = re.compile(r'bds_(?:pub|lst|tkt|lat|sk|live|sandbox)_')


# ---- the client's backend: the API with the sandbox key -------------------

def api(method, path, body=None, bearer=KEY, base=API, idempotency_key=None):
    return api_request(base, method, path, body, bearer,
                       {'Idempotency-Key': idempotency_key} if idempotency_key else None)


def link_token(**body):
    status, out = api('POST', '/v1/link-tokens', body)
    check(status == 201, 'link token: %s %s' % (status, out))
    return out


def ticket(lt):
    status, out = api('POST', '/v1/biller-connect/ticket', bearer=lt)
    check(status == 201, 'ticket: %s %s' % (status, out))
    return out


def exchange(lt, public_token):
    status, out = api('POST', '/v1/link-tokens/%s/exchange' % lt, {'public_token': public_token})
    check(status == 200, 'exchange: %s %s' % (status, out))
    status, link = api('GET', '/v1/links/%s' % out['link_id'])
    check(status == 200 and link['status'] == 'ACTIVE', 'link: %s %s' % (status, link))
    return link


# ---- the test app on two origins ------------------------------------------

class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def end_headers(self):
        self.send_header('Cache-Control', 'no-store')
        super().end_headers()


def serve_site():
    """The test app on two fresh loopback ports; the first becomes the
    client's allowed origin and its linked.html the redirect URI, as the
    developer registers them (PUT /v1/iam/clients/{id})."""
    global ORIGIN_OK, ORIGIN_OTHER, REDIRECT
    servers = []
    for _ in range(2):
        s = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                            functools.partial(Quiet, directory=SITE))
        threading.Thread(target=s.serve_forever, daemon=True).start()
        servers.append(s)
    ORIGIN_OK, ORIGIN_OTHER = ('http://127.0.0.1:%d' % s.server_address[1] for s in servers)
    REDIRECT = ORIGIN_OK + '/linked.html'
    status, out = api('PUT', '/v1/iam/clients/' + CLIENT,
                      {'allowedOrigins': [ORIGIN_OK], 'redirectUris': [REDIRECT]},
                      bearer=JWT, base=ENV['BDS_IAM_URL'])
    check(status == 200, 'registering the test app: %s %s' % (status, out))
    return servers


def embed_page(origin, url, mode='iframe', client_id=None):
    params = {'loader': LINK + '/connect.js', 'url': url, 'mode': mode}
    if client_id:
        params['client_id'] = client_id
    # a fresh query each time: a URL that differs only in its fragment
    # would not load the app again
    return '%s/embed.html?run=%d#%s' % (origin, time.monotonic_ns(), urllib.parse.urlencode(params))


def open_app(b, origin, url, mode='iframe', client_id=None):
    """The test app on origin opens url with connect.js (a click: a user
    gesture). iframe mode: the iframe element; popup: the app's window."""
    b.get(embed_page(origin, url, mode, client_id))
    main = b.d.current_window_handle
    b.wait(lambda: b.el('#open').is_enabled(), 'connect.js')
    b.click('#open')
    if mode == 'popup':
        b.wait(lambda: len(b.d.window_handles) == 2, 'the popup')
        return main
    return b.wait(lambda: b.d.find_elements(By.TAG_NAME, 'iframe'), 'the iframe')[0]


# ---- the browser ------------------------------------------------------------

class Browser(BaseBrowser):
    def __init__(self, scenario, width=900, height=1000, lang=None):
        super().__init__(scenario, ARTIFACTS, LINK, width=width, height=height, lang=lang)

    def heading(self):
        """The heading of the screen shown."""
        return self.js("const s = document.getElementById('screen-' + "
                       "document.body.getAttribute('data-screen'));"
                       "return s ? s.querySelector('h1').textContent"
                       ".replace(/[\\u2068\\u2069]/g, '') : null")

    def stored(self):
        return self.js("return sessionStorage.getItem('bds.link')")


# ---- steps of the page --------------------------------------------------------

def consent(b, shot=True):
    b.screen('consent')
    check('#ticket' not in b.d.current_url, 'the ticket stayed in the URL: %s' % b.d.current_url)
    if shot:
        b.shot('consent')
    b.click('#consent-continue')


OPTION_JS = """
const list = document.getElementById('biller-list');
if (list.getAttribute('data-term') !== arguments[0]) return null;
const o = [...list.querySelectorAll('[role=option]')]
    .find(o => o.querySelector('.option-name').textContent === arguments[1]);
return o ? o.id : null;
"""


def search(b, term):
    """Type term in the picker; until the list shows its results."""
    b.type('#biller-search', term)
    b.wait(lambda: b.el('#biller-list').get_attribute('data-term') == term, 'the search ' + term)


def pick(b, term, name, shot=True):
    """Search for term and click the option named name."""
    b.screen('picker')
    b.type('#biller-search', term)
    opt = b.wait(lambda: b.js(OPTION_JS, term, name), 'the option ' + name)
    if shot:
        b.shot('picker')
    b.click('#' + opt)


def login(b, user, password, shot=None):
    b.screen('credentials')
    b.type('#cred-username', user)
    b.type('#cred-password', password)
    if shot:
        b.shot(shot)
    b.click('#cred-submit')


def until_outcome(b, shot_progress=True):
    """Past the progress screen (shot when seen); the screen it ended on."""
    b.wait(lambda: b.screen_now() != 'credentials', 'the progress screen')
    if b.screen_now() == 'progress' and shot_progress:
        check(b.js("return document.getElementById('progress-status').getAttribute('aria-live')")
              == 'polite', 'progress is not aria-live')
        b.shot('progress')
    b.wait(lambda: b.screen_now() not in ('progress', 'credentials'), 'an outcome')
    return b.screen_now()


def messages(b, kind):
    return [m['data'] for m in b.app_log() if m['kind'] == kind]


def leave(b):
    """✕ while a flow is under way: the page asks first; Leave."""
    b.click('#close')
    b.wait(lambda: b.visible('#confirm-leave'), 'the confirm dialog')
    b.click('#confirm-leave')


# ---- scenarios ---------------------------------------------------------------

def embedded(b):
    """From the registered origin, in an iframe: bds:success, exchanged."""
    lt = link_token(client_user_id='web-embedded', consents=['bills', 'statements', 'usage'])
    tk = ticket(lt['link_token'])
    check(tk['embed_url'].startswith(LINK + '/connect?client_id=' + CLIENT + '#ticket='),
          'embed_url %s' % tk['embed_url'])
    frame = open_app(b, ORIGIN_OK, tk['embed_url'])
    b.d.switch_to.frame(frame)
    b.screen('consent')
    check(len(b.d.find_elements(By.CSS_SELECTOR, '#consent-scopes li')) == 3, 'three scopes')
    consent(b)
    pick(b, 'sandbox water', 'Sandbox Water Works')
    # a reload of the frame comes back to the step, still embedded
    b.screen('credentials')
    b.js('window.bdsBefore = true; location.reload()')
    b.wait(lambda: not b.js('return !!window.bdsBefore') and b.screen_now() == 'credentials' and
           b.text('#cred-title') == 'Log in to Sandbox Water Works', 'the step after the reload')
    login(b, 'user_good', 'pass_good', shot='credentials')
    check(until_outcome(b) == 'success', 'no success: %s' % b.screen_now())
    b.shot('success')
    b.d.switch_to.default_content()
    ok = b.wait(lambda: messages(b, 'success'), 'bds:success at the test app')
    check(len(ok) == 1 and ok[0]['public_token'].startswith('bds_pub_'), 'success %s' % ok)
    names = [e['name'] for e in messages(b, 'event')]
    for n in ('open', 'consent', 'select_biller', 'submit_credentials'):
        check(n in names, 'no bds:event %s in %s' % (n, names))
    check('pass_good' not in json.dumps(b.app_log()), 'the password reached the embedder')
    link = exchange(lt['link_token'], ok[0]['public_token'])
    check(link['biller']['name'] == 'Sandbox Water Works', 'biller %s' % link['biller'])
    # Done on the success screen closes the frame
    b.d.switch_to.frame(frame)
    check(b.text('#success-done') == 'Done', b.text('#success-done'))
    b.click('#success-done')
    b.d.switch_to.default_content()
    b.wait(lambda: not b.d.find_elements(By.TAG_NAME, 'iframe'), 'the frame to close')
    check('done' in [e['name'] for e in messages(b, 'event')], 'no done event')
    b.assert_clean([LINK, ORIGIN_OK])
    return {'link_token': lt['link_token'], 'link_id': link['id']}


def not_allowed(b):
    """The same page from an origin the client did not register: the
    browser refuses to frame it, nothing runs, nothing is posted."""
    lt = link_token(client_user_id='web-other')
    tk = ticket(lt['link_token'])
    frame = open_app(b, ORIGIN_OTHER, tk['embed_url'])
    b.wait(lambda: any('frame-ancestors' in m['message'] for m in b.d.get_log('browser')),
           'the browser to refuse the frame')
    time.sleep(1.5)
    b.shot('not-framed')
    check(messages(b, 'success') == [] and messages(b, 'event') == [] and
          messages(b, 'exit') == [], 'the page talked: %s' % b.app_log())
    b.d.switch_to.frame(frame)
    check(b.screen_now() is None, 'the page rendered in the frame')
    b.d.switch_to.default_content()
    # the page never ran: its ticket is still unused
    status, out = api('POST', '/v1/link-sessions', {'ticket': tk['ticket']}, bearer=None, base=LINK)
    check(status == 201, 'ticket after the refused frame: %s %s' % (status, out))
    return {'link_token': lt['link_token']}


def hosted(b):
    """hosted_url with a registered redirect_uri: back there with link_token
    and status, nothing secret."""
    lt = link_token(client_user_id='web-hosted', hosted={'redirect_uri': REDIRECT})
    url = lt['hosted_url']
    check(url.startswith(LINK + '/connect#ticket=bds_tkt_'), 'hosted_url %s' % url)
    b.get(url)
    consent(b)
    pick(b, 'sandbox power', 'Sandbox Power & Light')
    login(b, 'user_good', 'pass_good')
    check(until_outcome(b) == 'success', 'no success: %s' % b.screen_now())
    b.shot('success-redirecting')
    b.wait(lambda: b.d.current_url.startswith(REDIRECT + '?'), 'the redirect')
    got = urllib.parse.urlsplit(b.d.current_url)
    q = urllib.parse.parse_qs(got.query)
    check(sorted(q) == ['link_token', 'status'], 'redirect query %s' % q)
    check(q['link_token'] == [lt['link_token']] and q['status'] == ['completed'],
          'redirect query %s' % q)
    check(not got.fragment and not SECRET.search(b.d.current_url), 'a secret in %s' % b.d.current_url)
    b.shot('redirected')
    b.assert_clean([LINK, ORIGIN_OK])
    return {'link_token': lt['link_token']}


def mfa(b):
    """user_mfa: a wrong code first, then 1234; hosted without a redirect
    ends on the done screen."""
    lt = link_token(client_user_id='web-mfa', hosted=True)
    b.get(lt['hosted_url'])
    consent(b, shot=False)
    pick(b, 'sandbox power', 'Sandbox Power & Light', shot=False)
    login(b, 'user_mfa', 'pass_good')
    check(until_outcome(b, shot_progress=False) == 'mfa', 'no MFA screen: %s' % b.screen_now())
    check(b.active_id() == 'mfa-title', 'focus %s' % b.active_id())
    # the catalog's words, and the biller's own prompt beside them
    check(b.text('#mfa-prompt') == 'Sandbox Power & Light sent you a code. Enter it below.',
          b.text('#mfa-prompt'))
    check(b.text('#mfa-biller-prompt').startswith('The biller says: ') and
          '1234' in b.text('#mfa-biller-prompt'), b.text('#mfa-biller-prompt'))
    b.shot('mfa')
    b.type('#mfa-code', '0000')
    b.click('#mfa-submit')
    b.wait(lambda: b.screen_now() == 'mfa' and b.visible('#mfa-error'), 'the MFA error')
    # a wrong code spends one of the session's five attempts: it says so
    check(b.text('#mfa-error') == 'That code did not work. You have 4 attempts left.',
          b.text('#mfa-error'))
    b.shot('mfa-error')
    # a new code: the biller asks again, the page says so
    check(b.visible('#mfa-resend') and b.text('#mfa-resend') == 'Resend code', 'no Resend code')
    b.click('#mfa-resend')
    b.wait(lambda: b.screen_now() == 'mfa' and b.text('#mfa-status'), 'the new code')
    check(b.text('#mfa-status') == 'We asked Sandbox Power & Light for a new code.',
          b.text('#mfa-status'))
    check(b.active_id() == 'mfa-title', 'focus %s' % b.active_id())
    b.type('#mfa-code', '1234')
    b.click('#mfa-submit')
    b.screen('success')
    check(b.visible('#success-done'), 'no Done on the hosted success without a redirect')
    # a hosted page that has ended has nothing to close
    check(not b.visible('#close'), 'the close button stayed after the hosted success')
    b.shot('done')
    b.assert_clean([LINK])
    return {'link_token': lt['link_token']}


def wrong_password(b):
    """In a popup opened by connect.js: a locked account (error, retry),
    a wrong password (attempts left), then the right one."""
    lt = link_token(client_user_id='web-popup')
    tk = ticket(lt['link_token'])
    # the connect_url and clientId: the loader adds client_id itself
    main = open_app(b, ORIGIN_OK, tk['connect_url'], mode='popup', client_id=CLIENT)
    b.d.switch_to.window([h for h in b.d.window_handles if h != main][0])
    check('client_id=' + CLIENT in b.d.current_url, 'popup url %s' % b.d.current_url)
    consent(b, shot=False)
    pick(b, 'sandbox gas', 'Sandbox Gas Co.', shot=False)
    login(b, 'user_locked', 'pass_good')
    check(until_outcome(b, shot_progress=False) == 'error', 'no error: %s' % b.screen_now())
    check('locked' in b.text('#error-body'), b.text('#error-body'))
    check(b.text('#error-title') == 'Account locked', b.text('#error-title'))
    check(b.active_id() == 'error-title', 'focus %s' % b.active_id())
    check(b.visible('#error-retry'), 'no retry')
    # the biller's own site, to unlock the account or reset the password
    check(b.el('#error-website').get_attribute('href').rstrip('/') == 'https://sandbox-gas.example',
          b.el('#error-website').get_attribute('href'))
    check(b.el('#error-forgot').get_attribute('href') == 'https://sandbox-gas.example/login',
          b.el('#error-forgot').get_attribute('href'))
    check(b.text('#error-forgot') == 'Forgot password?', b.text('#error-forgot'))
    b.shot('error')
    b.click('#error-retry')
    login(b, 'user_good', 'wrong-password')
    b.wait(lambda: b.screen_now() == 'credentials' and b.visible('#cred-error'),
           'the credentials error')
    check(b.text('#cred-error').startswith('Wrong username or password.') and
          '4 attempts' in b.text('#cred-error'), b.text('#cred-error'))
    check(b.el('#cred-password').get_attribute('value') == '', 'the password stayed filled')
    b.shot('credentials-error')
    login(b, 'user_good', 'pass_good')
    b.screen('success')
    b.click('#success-done')
    b.d.switch_to.window(main)
    b.wait(lambda: len(b.d.window_handles) == 1, 'the popup to close')
    ok = messages(b, 'success')
    check(len(ok) == 1, 'success %s' % ok)
    names = [e['name'] for e in messages(b, 'event')]
    check(names.count('error') >= 2, 'error events %s' % names)
    link = exchange(lt['link_token'], ok[0]['public_token'])
    b.assert_clean([LINK, ORIGIN_OK])
    return {'link_token': lt['link_token'], 'link_id': link['id']}


FORGER_JS = """
const f = document.createElement('iframe');
f.src = arguments[0] + '/forger.html';
f.id = 'forger';
document.body.appendChild(f);
"""


def exit_flow(b):
    """Forged messages from another origin change nothing; the close
    button (embedded: bds:exit user_closed, frame removed), a modal
    overlay, open() again (the first page exits), the embedder's close()
    (the page exits), and hosted (the exit screen)."""
    lt = link_token(client_user_id='web-exit')
    tk = ticket(lt['link_token'])
    frame = open_app(b, ORIGIN_OK, tk['embed_url'])
    b.d.switch_to.frame(frame)
    consent(b, shot=False)
    b.screen('picker')
    b.d.switch_to.default_content()
    b.js(FORGER_JS, ORIGIN_OTHER)
    b.d.switch_to.frame(b.el('#forger'))
    b.wait(lambda: b.js("return document.body.getAttribute('data-sent')") == 'yes', 'the forger')
    b.d.switch_to.default_content()
    time.sleep(1)
    check(not messages(b, 'success') and not messages(b, 'exit'),
          'a forged message got through: %s' % b.app_log())
    check(frame.is_displayed(), 'a forged message closed the frame')
    b.d.switch_to.frame(frame)
    check(b.screen_now() == 'picker', 'a forged bds:close moved the page to %s' % b.screen_now())
    leave(b)
    b.d.switch_to.default_content()
    out = b.wait(lambda: messages(b, 'exit'), 'bds:exit')
    check(out == [{'reason': 'user_closed'}], 'exit %s' % out)
    b.wait(lambda: not b.d.find_elements(By.CSS_SELECTOR, 'iframe[title]'), 'the frame to go')

    # the overlay is a modal dialog: the app behind it is inert meanwhile
    # and gets the focus back after
    check(b.js('return !!document.getElementById("open").closest("[inert]")') is False, 'inert after close')
    check(b.active_id() == 'open', 'focus after the frame went: %s' % b.active_id())

    # the embedder closes it: handle.close() -> bds:close -> the page exits
    lt3 = link_token(client_user_id='web-exit-close')
    frame = open_app(b, ORIGIN_OK, ticket(lt3['link_token'])['embed_url'])
    check(b.js("return document.querySelectorAll('[role=dialog][aria-modal=true] iframe')"
               ".length") == 1, 'the overlay is not a modal dialog')
    check(b.js('return !!document.getElementById("open").closest("[inert]")') is True,
          'the app behind the overlay is not inert')
    b.d.switch_to.frame(frame)
    b.screen('consent')
    b.d.switch_to.default_content()
    # open() again: the first page is asked to exit (its onExit: user_closed)
    # and only the new one stays
    lt4 = link_token(client_user_id='web-exit-again')
    b.js("window.second = BDSConnect.open({url: arguments[0], onExit: function (d) {"
         " window.bdsLog.push({kind: 'exit2', data: d}); }})",
         ticket(lt4['link_token'])['embed_url'])
    out = b.wait(lambda: messages(b, 'exit'), 'bds:exit of the replaced page')
    check(out == [{'reason': 'user_closed'}], 'exit %s' % out)
    b.wait(lambda: len(b.d.find_elements(By.TAG_NAME, 'iframe')) == 1, 'one frame left')
    frame = b.el('iframe')
    b.d.switch_to.frame(frame)
    b.screen('consent')
    b.d.switch_to.default_content()
    check(b.js('return !!document.getElementById("open").closest("[inert]")') is True,
          'the app behind the second overlay is not inert')
    b.js("window.second.close()")
    out = b.wait(lambda: messages(b, 'exit2'), 'bds:exit after close()')
    check(out == [{'reason': 'user_closed'}], 'exit %s' % out)
    b.wait(lambda: not b.d.find_elements(By.TAG_NAME, 'iframe'), 'the frame to go')
    check(b.js('return !!document.getElementById("open").closest("[inert]")') is False, 'inert after close')
    # the focus goes back where it was before the first page opened
    check(b.active_id() == 'open', 'focus after the second frame went: %s' % b.active_id())

    lt2 = link_token(client_user_id='web-exit-hosted', hosted=True)
    b.get(lt2['hosted_url'])
    b.screen('consent')
    b.click('#close')
    b.screen('exit')
    b.shot('exit')
    b.assert_clean([LINK, ORIGIN_OK, ORIGIN_OTHER])  # the forger
    return {'link_token': lt['link_token'], 'link_token_hosted': lt2['link_token'],
            'link_token_closed': lt3['link_token'], 'link_token_again': lt4['link_token']}


def keyboard(b):
    """Keyboard only, 320 px wide: Tab, Enter, typing and the arrow keys
    through consent, the picker, credentials and MFA to the done screen."""
    lt = link_token(client_user_id='web-keys', hosted=True, consents=['bills', 'payment_history'])
    b.get(lt['hosted_url'])
    check(b.js('return window.innerWidth') <= 340, 'viewport %s' % b.js('return window.innerWidth'))

    def fits(what):
        check(b.js('return document.documentElement.scrollWidth <= window.innerWidth'),
              '%s scrolls sideways at %s px' % (what, b.js('return window.innerWidth')))

    b.screen('consent')
    check(b.js("return document.querySelectorAll('header, main, footer').length") == 3,
          'landmarks')
    # the client's name sits isolated in the sentence (a name with a
    # right-to-left override cannot turn it around)
    title = b.js("return document.getElementById('consent-title').textContent")
    check('\u2068' in title and '\u2069' in title, 'the client name is not isolated: %r' % title)
    check(b.active_id() == 'consent-title', 'focus %s' % b.active_id())
    fits('consent')
    b.shot('narrow-consent')
    # the privacy notice, then Continue
    b.keys(Keys.TAB)
    check(b.active_id() == 'consent-privacy', 'focus %s' % b.active_id())
    b.keys(Keys.TAB)
    check(b.active_id() == 'consent-continue', 'focus %s' % b.active_id())
    b.keys(Keys.ENTER)

    b.screen('picker')
    check(b.active_id() == 'picker-title', 'focus %s' % b.active_id())
    b.keys(Keys.TAB)
    check(b.active_id() == 'biller-search', 'focus %s' % b.active_id())
    check(b.js("return document.getElementById('biller-search').labels.length") == 1, 'label')
    b.keys('sandbox water')
    b.wait(lambda: b.js(OPTION_JS, 'sandbox water', 'Sandbox Water Works') == 'biller-opt-0',
           'Sandbox Water Works first')
    # the list is not a Tab stop of its own (focus stays in the combobox)
    check(b.el('#biller-list').get_attribute('tabindex') == '-1', 'the listbox is a Tab stop')
    check(b.js("return document.getElementById('screen-progress').hasAttribute('aria-busy')")
          is False, 'progress keeps aria-busy')
    b.keys(Keys.ARROW_DOWN)
    check(b.el('#biller-search').get_attribute('aria-activedescendant') == 'biller-opt-0',
          'active descendant')
    check(b.el('#biller-opt-0').get_attribute('aria-selected') == 'true', 'selected')
    b.keys(Keys.ARROW_DOWN, Keys.ARROW_UP)
    check(b.el('#biller-opt-0').get_attribute('aria-selected') == 'true', 'back to the first')
    fits('picker')
    b.shot('narrow-picker')
    check(b.text('#biller-opt-0 .option-name') == 'Sandbox Water Works', b.text('#biller-opt-0'))
    # the monogram is decoration: the option's name is the biller's
    check(b.js("return document.querySelector('#biller-opt-0 .monogram, #biller-opt-0 img.logo')"
               ".matches('[aria-hidden=true], img[alt=\"\"]')"), 'the logo is not decoration')
    b.keys(Keys.ENTER)

    b.screen('credentials')
    check(b.active_id() == 'cred-title', 'focus %s' % b.active_id())
    b.keys(Keys.TAB)
    check(b.active_id() == 'cred-username', 'focus %s' % b.active_id())
    check(b.js("return [...document.querySelectorAll('input')].every(i => i.labels.length > 0)"),
          'an input without a label')
    b.keys('user_mfa', Keys.TAB)
    check(b.active_id() == 'cred-password', 'focus %s' % b.active_id())
    b.keys('pass_good', Keys.ENTER)
    b.screen('mfa')
    check(b.active_id() == 'mfa-title', 'focus %s' % b.active_id())
    b.keys(Keys.TAB)
    check(b.active_id() == 'mfa-code', 'focus %s' % b.active_id())
    b.keys('1234', Keys.ENTER)
    b.screen('success')
    check(b.active_id() == 'success-title', 'focus %s' % b.active_id())
    fits('success')
    b.shot('narrow-success')
    b.assert_clean([LINK])
    return {'link_token': lt['link_token']}


def spanish(b):
    """language es-MX: the es catalog, then the close button."""
    lt = link_token(client_user_id='web-es', hosted=True, language='es-MX')
    b.get(lt['hosted_url'])
    b.screen('consent')
    check(b.js('return document.documentElement.lang') == 'es', 'lang')
    check('quiere vincular' in b.text('#consent-title'), b.text('#consent-title'))
    check(b.text('#consent-continue') == 'Continuar', b.text('#consent-continue'))
    check(b.el('#close').get_attribute('aria-label') == 'Salir', 'close label')
    b.shot('consent')
    b.click('#consent-continue')
    b.screen('picker')
    check(b.text('label[for=biller-search]') == 'Busca tu proveedor', 'picker label')
    b.shot('picker')
    pick(b, 'sandbox power', 'Sandbox Power & Light', shot=False)
    login(b, 'user_mfa', 'pass_good')
    check(until_outcome(b, shot_progress=False) == 'mfa', 'no MFA screen: %s' % b.screen_now())
    # the page's language; the biller's English prompt only beside it
    check('te envió un código' in b.text('#mfa-prompt'), b.text('#mfa-prompt'))
    check(b.text('#mfa-biller-prompt').startswith('Mensaje de la empresa: '),
          b.text('#mfa-biller-prompt'))
    b.shot('mfa')
    b.click('#close')
    b.wait(lambda: b.visible('#confirm-leave'), 'the confirm dialog')
    check(b.text('#confirm-title') == '¿Salir sin vincular?', b.text('#confirm-title'))
    b.click('#confirm-leave')
    b.screen('exit')
    check(b.text('#exit-title') == 'Saliste sin vincular', b.text('#exit-title'))
    b.shot('exit')
    b.assert_clean([LINK])
    return {'link_token': lt['link_token']}


def refused(b):
    """The page stops: opened for another client than its ticket's, a used
    or unknown ticket, no ticket."""
    lt = link_token(client_user_id='web-mismatch')
    tk = ticket(lt['link_token'])
    b.get('%s/connect?client_id=%s#ticket=%s' % (LINK, OTHER_CLIENT, tk['ticket']))
    b.screen('error')
    check('another app' in b.text('#error-body'), b.text('#error-body'))
    check(not b.visible('#error-retry'), 'a retry for a refused page')
    b.shot('error-mismatch')
    b.get('%s/connect#ticket=%s' % (LINK, tk['ticket']))
    b.screen('error')
    check('already used' in b.text('#error-body'), b.text('#error-body'))
    b.get(LINK + '/connect')
    b.screen('error')
    check('needs a link' in b.text('#error-body'), b.text('#error-body'))
    b.assert_clean([LINK])
    return {'link_token': lt['link_token']}


# The page's next POST to a path answers status instead (once): after
# sending it for real (send) or without sending it.
FAKE_JS = """
const [path, status, send] = arguments;
const real = window.fetch.bind(window);
window.fetch = function (url, init) {
  if (String(url).endsWith(path) && init && init.method === 'POST') {
    window.fetch = real;
    const fake = () => new Response('{"error_code":"FAKE"}',
        {status: status, headers: {'Content-Type': 'application/json'}});
    return send ? real(url, init).then(fake) : Promise.resolve(fake());
  }
  return real(url, init);
};
"""


def unsure(b):
    """An answer the page cannot trust (a 502 after the login was taken; an
    exit refused with 409 while MFA waits) is settled by asking the session:
    the page follows it (progress, then success; the MFA screen again),
    never shows a failure or an exit that did not happen."""
    lt = link_token(client_user_id='web-unsure', hosted=True)
    b.get(lt['hosted_url'])
    consent(b, shot=False)
    pick(b, 'sandbox power', 'Sandbox Power & Light', shot=False)
    b.screen('credentials')
    b.js(FAKE_JS, '/v1/link-sessions/connect', 502, True)
    login(b, 'user_mfa', 'pass_good')
    check(until_outcome(b, shot_progress=False) == 'mfa', 'after a lost login answer: %s'
          % b.screen_now())
    b.js(FAKE_JS, '/v1/link-sessions/exit', 409, False)
    leave(b)
    time.sleep(1.5)
    check(b.screen_now() == 'mfa', 'a refused exit left the MFA screen: %s' % b.screen_now())
    b.type('#mfa-code', '1234')
    b.click('#mfa-submit')
    b.screen('success')
    b.assert_clean([LINK])
    return {'link_token': lt['link_token']}


def update(b):
    """Update mode (hosted, no redirect) repairs the user's link in place:
    the page says reconnect, not link, from consent to success."""
    status, made = api('POST', '/v1/sandbox/account-links', {'client_user_id': 'web-update'},
                       idempotency_key='web-update-%d' % time.monotonic_ns())
    check(status == 201, 'sandbox link: %s %s' % (status, made))
    lt = link_token(client_user_id='web-update', hosted=True, update={'link_id': made['link_id']})
    check(lt['mode'] == 'update', 'mode %s' % lt['mode'])
    b.get(lt['hosted_url'])
    b.screen('consent')
    check(b.text('#consent-title').endswith(
          ' wants to reconnect your Sandbox Power & Light account'), b.text('#consent-title'))
    b.shot('consent')
    b.click('#consent-continue')
    b.screen('credentials')	# the link's biller: no picker
    login(b, 'user_good', 'pass_good')
    check(until_outcome(b, shot_progress=False) == 'success', 'no success: %s' % b.screen_now())
    check(b.text('#success-title') == 'Your account is reconnected', b.text('#success-title'))
    body = b.text('#success-body')
    check(body.startswith('Your Sandbox Power & Light account is connected to ') and
          body.endswith(' again.'), body)
    check(not b.visible('#close'), 'the close button stayed after the hosted success')
    b.shot('success')
    b.assert_clean([LINK])
    return {'link_token': lt['link_token'], 'link_id': made['link_id']}


def spend(lt):
    """Ten failed logins of the link token, as a script guessing passwords
    through the API would make them: two sessions of five."""
    for _ in range(2):
        status, ses = api('POST', '/v1/link-sessions', {'ticket': ticket(lt)['ticket']},
                          bearer=None)
        check(status == 201, 'session: %s %s' % (status, ses))
        for _ in range(5):
            status, out = api('POST', '/v1/link-sessions/connect',
                              {'biller_id': SANDBOX_BILLER, 'username': 'user_good',
                               'password': 'wrong'}, bearer=ses['session_token'])
            check(status == 202, 'connect: %s %s' % (status, out))
            deadline = time.monotonic() + WAIT
            while True:
                status, cur = api('GET', '/v1/link-sessions/current',
                                  bearer=ses['session_token'])
                if status != 200 or cur.get('status') != 'connecting':
                    break
                check(time.monotonic() < deadline, 'the connect job never ran')
                time.sleep(0.1)
            check(cur.get('status') == 'failed', 'after a wrong password: %s %s' % (status, cur))


def too_many(b):
    """A link token that has had its ten failed logins: its hosted_url
    (minted before) opens no session; the page says why, with no retry."""
    lt = link_token(client_user_id='web-too-many', hosted=True)
    spend(lt['link_token'])
    b.get(lt['hosted_url'])
    b.screen('error')
    check(b.text('#error-body').startswith('Too many failed attempts to log in.'),
          b.text('#error-body'))
    check(b.text('#error-title') == 'Too many attempts', b.text('#error-title'))
    check(not b.visible('#error-retry'), 'a retry for a spent link token')
    b.shot('error-too-many')

    # in the page: the fifth wrong password ends the session; the heading
    # says so, with the biller's site and its password reset
    lt2 = link_token(client_user_id='web-too-many-page', hosted=True)
    b.get(lt2['hosted_url'])
    consent(b, shot=False)
    pick(b, 'sandbox gas', 'Sandbox Gas Co.', shot=False)
    # another login than the one spend() used up
    for _ in range(4):
        login(b, 'user_paid', 'wrong')
        # the form again, its button enabled once more: the last error
        # stays shown while the submit is under way
        b.wait(lambda: b.screen_now() == 'credentials' and b.visible('#cred-error') and
               b.el('#cred-submit').is_enabled(), 'the credentials error')
    login(b, 'user_paid', 'wrong')
    b.screen('error')
    check(b.heading() == 'Too many attempts', b.heading())
    check(not b.visible('#error-retry'), 'a retry after the session ended')
    check(b.el('#error-forgot').get_attribute('href') == 'https://sandbox-gas.example/login',
          'no Forgot password?')
    check(b.visible('#error-website'), "no biller's website")
    check('session_token' not in (b.stored() or ''), 'the token stayed: %s' % b.stored())
    b.shot('error-too-many-page')
    b.assert_clean([LINK])
    return {'link_token': lt['link_token'], 'link_token_page': lt2['link_token']}


# ---- the page people trust ----------------------------------------------------

def badge(b, where):
    check(b.visible('#env-badge') and b.text('#env-badge').lower() == 'sandbox',
          'no sandbox badge on %s' % where)


def scopes_shown(b, css):
    return b.js("return [...document.querySelectorAll(arguments[0] + ' li')]"
                ".map(li => li.getAttribute('data-scope'))", css)


def session_billers(lt, term=''):
    """What the picker's API answers a fresh session of link token lt."""
    status, ses = api('POST', '/v1/link-sessions', {'ticket': ticket(lt)['ticket']},
                      bearer=None, base=LINK)
    check(status == 201, 'session: %s %s' % (status, ses))
    q = '?limit=8' + ('&search_term=' + urllib.parse.quote(term) if term else '')
    status, out = api('GET', '/v1/link-sessions/billers' + q, bearer=ses['session_token'],
                      base=LINK)
    check(status == 200, 'billers: %s %s' % (status, out))
    return out


def resume(b):
    """A reload on every step comes back to it, from the session kept for
    the tab (the used ticket is not redeemed again: one session); the
    token goes at the end; the hosted_url opened again says already linked."""
    lt = link_token(client_user_id='web-resume', hosted=True)
    b.get(lt['hosted_url'])
    b.screen('consent')
    badge(b, 'consent')
    check('#ticket' not in b.d.current_url, 'the ticket stayed in the URL: %s' % b.d.current_url)
    b.reload()
    b.screen('consent')
    b.click('#consent-continue')
    b.screen('picker')
    b.reload()
    b.screen('picker')
    badge(b, 'picker')
    pick(b, 'sandbox power', 'Sandbox Power & Light', shot=False)
    b.screen('credentials')
    b.reload()
    b.screen('credentials')
    check(b.text('#cred-title') == 'Log in to Sandbox Power & Light', b.text('#cred-title'))
    check(b.active_id() == 'cred-title', 'focus %s' % b.active_id())
    login(b, 'user_locked', 'pass_good')
    check(until_outcome(b, shot_progress=False) == 'error', 'no error: %s' % b.screen_now())
    check(b.heading() == 'Account locked', b.heading())
    b.reload()
    b.screen('error')
    check(b.heading() == 'Account locked', 'after the reload: %s' % b.heading())
    badge(b, 'error')
    b.click('#error-retry')
    b.screen('credentials')
    b.reload()
    b.screen('credentials')
    # a reload while the login runs: the progress (or already the outcome)
    login(b, 'user_mfa', 'pass_good')
    b.wait(lambda: b.screen_now() in ('progress', 'mfa'), 'progress or MFA')
    b.reload()
    b.wait(lambda: b.screen_now() in ('progress', 'mfa'), 'progress or MFA after the reload')
    b.screen('mfa')
    b.type('#mfa-code', '0000')
    b.click('#mfa-submit')
    b.wait(lambda: b.screen_now() == 'mfa' and b.visible('#mfa-error'), 'the MFA error')
    b.reload()
    b.screen('mfa')
    badge(b, 'mfa')
    check('session_token' in (b.stored() or ''), 'no session kept for the tab')
    b.type('#mfa-code', '1234')
    b.click('#mfa-submit')
    b.screen('success')
    badge(b, 'success')
    check('session_token' not in (b.stored() or ''), 'the token stayed: %s' % b.stored())
    b.reload()
    b.screen('linked')
    check(b.heading() == 'Already linked', b.heading())
    # the used hosted URL, opened again: 409 LINK_SESSION_COMPLETED
    b.get(lt['hosted_url'])
    b.screen('linked')
    b.js("sessionStorage.clear()")
    b.get(lt['hosted_url'])
    b.screen('linked')
    check('already used' in b.text('#linked-body'), b.text('#linked-body'))
    b.shot('linked')
    b.assert_clean([LINK])
    return {'link_token': lt['link_token']}


def trust(b):
    """Consent per the biller's scopes, the client with its domain, how to
    disconnect, the privacy notice; the sandbox badge and test logins; the
    picker's default list and counts, no loose matches, a biller request;
    ✕ asks before it leaves."""
    # pinned to a biller that gives bills and usage only
    lt = link_token(client_user_id='web-trust', hosted=True, biller_id=SCOPED_BILLER,
                    consents=['bills', 'account_details', 'usage', 'payments'])
    b.get(lt['hosted_url'])
    b.screen('consent')
    badge(b, 'consent')
    check(scopes_shown(b, '#consent-scopes') == ['bills', 'usage'],
          'consent scopes %s' % scopes_shown(b, '#consent-scopes'))
    check(b.text('#consent-client').endswith('(127.0.0.1)'), b.text('#consent-client'))
    check('disconnect' in b.text('#consent-disconnect'), b.text('#consent-disconnect'))
    check(b.el('#consent-privacy').get_attribute('href') == LINK + '/legal/end-user-privacy',
          b.el('#consent-privacy').get_attribute('href'))
    b.shot('consent-scoped')
    b.click('#consent-continue')
    b.screen('credentials')
    badge(b, 'credentials')
    check(b.visible('#sandbox-logins'), 'no sandbox test logins under the form')
    check('user_mfa' in b.text('#sandbox-logins') and 'pass_good' in b.text('#sandbox-logins'),
          b.text('#sandbox-logins'))
    b.shot('credentials-sandbox')

    # not pinned: all four asked for, then the chosen biller's share
    lt2 = link_token(client_user_id='web-trust-2', hosted=True,
                     consents=['bills', 'account_details', 'usage', 'payments'])
    want = session_billers(lt2['link_token'])
    b.get(lt2['hosted_url'])
    b.screen('consent')
    check(scopes_shown(b, '#consent-scopes') == ['bills', 'usage', 'account_details',
                                                  'payments'] or
          sorted(scopes_shown(b, '#consent-scopes')) ==
          sorted(['bills', 'account_details', 'usage', 'payments']),
          'consent scopes %s' % scopes_shown(b, '#consent-scopes'))
    b.click('#consent-continue')
    b.screen('picker')
    badge(b, 'picker')
    # opens on the default order (no search), with its counts
    b.wait(lambda: b.el('#biller-list').get_attribute('data-term') == '' and
           b.text('#biller-status'), 'the default list')
    names = b.js("return [...document.querySelectorAll('#biller-list .option-name')]"
                 ".map(e => e.textContent)")
    check(names == [x['name'] for x in want['data']], 'default list %s, API %s' %
          (names, [x['name'] for x in want['data']]))
    check(len(names) == min(8, want['total_count']), 'default list of %d' % len(names))
    check(b.text('#biller-status') == 'Showing %d of %d billers' %
          (len(names), want['total_count']), b.text('#biller-status'))
    check(b.js("return [...document.querySelectorAll('#biller-list [role=option]')].every("
               "o => o.querySelector('img.logo[src^=\"/\"], .monogram'))"),
          'an option without a logo or monogram')
    # a stored logo is the link host's file, shown (CSP img-src 'self')
    logos = [x['logo_src'] for x in want['data'] if x.get('logo_src')]
    check(logos and len(logos) < len(names), 'logos %s of %d: want both kinds' %
          (logos, len(names)))
    check(b.js("return document.querySelectorAll('#biller-list .monogram').length")
          == len(names) - len(logos), 'a biller without a logo has no monogram')
    b.wait(lambda: b.js("return [...document.querySelectorAll('#biller-list img.logo')]"
                        ".filter(i => i.complete && i.naturalWidth > 0)"
                        ".map(i => i.getAttribute('src'))") == logos, 'the logos %s' % logos)
    b.shot('picker-default')
    # a term that matches nothing: no match, no loose partial matches
    search(b, 'zzqxv')
    check(b.js("return document.querySelectorAll('#biller-list [role=option]').length") == 0,
          'options for a term that matches nothing')
    check(b.text('#biller-empty') == 'No match for “zzqxv”.', b.text('#biller-empty'))
    check(b.text('#biller-status') == 'No match', b.text('#biller-status'))
    b.shot('picker-none')
    pick(b, 'scoped', SCOPED_NAME, shot=False)
    b.screen('credentials')
    check(scopes_shown(b, '#cred-scopes') == ['bills', 'usage'],
          'credentials scopes %s' % scopes_shown(b, '#cred-scopes'))

    # "Can't find your biller?": the request, a bad website first
    b.click('#cred-other')
    b.screen('picker')
    search(b, 'Newco Power')
    b.click('#biller-missing')
    b.screen('request')
    badge(b, 'request')
    check(b.el('#request-name').get_attribute('value') == 'Newco Power', 'the name not carried')
    b.type('#request-url', 'not a website')
    b.click('#request-submit')
    b.wait(lambda: b.visible('#request-error'), 'the website error')
    check(b.el('#request-url').get_attribute('aria-invalid') == 'true', 'aria-invalid')
    check(b.active_id() == 'request-url', 'focus %s' % b.active_id())
    b.shot('request-error')
    # ✕ asks; Escape stays
    b.click('#close')
    b.wait(lambda: b.visible('#confirm-stay'), 'the confirm dialog')
    check(b.js("return document.getElementById('confirm').matches(':modal')"), 'not modal')
    check(b.active_id() == 'confirm-stay', 'focus %s' % b.active_id())
    # no biller chosen for this step: the dialog names none
    check(b.text('#confirm-body') == 'Nothing is linked yet. If you leave now, you will have to'
          ' start again.', b.text('#confirm-body'))
    b.shot('confirm')
    b.keys(Keys.ESCAPE)
    b.wait(lambda: not b.visible('#confirm-stay'), 'the dialog to close')
    check(b.screen_now() == 'request', 'Escape left: %s' % b.screen_now())
    check(b.active_id() == 'close', 'focus after the dialog %s' % b.active_id())
    b.type('#request-url', REQUEST_HOST)
    b.click('#request-submit')
    b.screen('requested')
    badge(b, 'requested')
    check(b.heading() == 'Request sent', b.heading())
    check('Newco Power' in b.text('#requested-body'), b.text('#requested-body'))
    b.shot('requested')
    b.reload()
    b.screen('requested')
    check('Newco Power' in b.text('#requested-body'), 'after the reload: %s' %
          b.text('#requested-body'))
    b.click('#requested-back')
    b.screen('picker')
    # ✕ again: Stay, then Leave
    b.click('#close')
    b.wait(lambda: b.visible('#confirm-stay'), 'the confirm dialog')
    b.click('#confirm-stay')
    b.wait(lambda: not b.visible('#confirm-stay'), 'the dialog to close')
    check(b.screen_now() == 'picker', 'Stay left: %s' % b.screen_now())
    leave(b)
    b.screen('exit')
    b.assert_clean([LINK])
    return {'link_token': lt['link_token'], 'link_token_picker': lt2['link_token']}


def done(b):
    """Success without a redirect, in a window the app opened: Done closes
    it."""
    lt = link_token(client_user_id='web-done', hosted=True)
    b.get(ORIGIN_OK + '/linked.html')
    main = b.d.current_window_handle
    b.js("window.open(arguments[0], 'bds_hosted')", lt['hosted_url'])
    b.wait(lambda: len(b.d.window_handles) == 2, 'the window')
    b.d.switch_to.window([h for h in b.d.window_handles if h != main][0])
    consent(b, shot=False)
    pick(b, 'sandbox water', 'Sandbox Water Works', shot=False)
    login(b, 'user_good', 'pass_good')
    check(until_outcome(b, shot_progress=False) == 'success', 'no success: %s' % b.screen_now())
    check(b.visible('#success-done'), 'no Done')
    b.shot('done')
    b.click('#success-done')
    b.d.switch_to.window(main)
    b.wait(lambda: len(b.d.window_handles) == 1, 'the window to close')
    b.assert_clean([LINK, ORIGIN_OK])
    return {'link_token': lt['link_token']}


# ---- axe-core on every screen ----------------------------------------------------

# GET /current waits (the page stays on progress) until window.bdsRelease()
HOLD_JS = """
const real = window.fetch.bind(window);
let release;
const gate = new Promise(r => { release = r; });
window.bdsRelease = () => { window.fetch = real; release(); };
window.fetch = function (url, init) {
  if (String(url).endsWith('/v1/link-sessions/current')) return gate.then(() => real(url, init));
  return real(url, init);
};
"""


def axe_walk(b, lang):
    """Every screen, every dialog, in one language."""
    seen = []

    def at(where, click=None, screen=None):
        """Click (when given), wait for the screen (when given), run axe."""
        if click:
            b.click(click)
        if screen:
            b.screen(screen)
        axe_check(b, where, seen)

    b.get(LINK + '/connect')
    b.screen('error')
    check(b.js('return document.documentElement.lang') == lang, 'lang %s' %
          b.js('return document.documentElement.lang'))
    at('error-no-ticket')

    lt = link_token(client_user_id='web-axe-' + lang, hosted=True, language=lang,
                    consents=['bills', 'statements', 'usage', 'account_details'])
    b.get(lt['hosted_url'])
    at('consent', screen='consent')
    b.click('#consent-continue')
    b.screen('picker')
    b.wait(lambda: b.text('#biller-status'), 'the default list')
    at('picker')
    search(b, 'sandbox')
    b.keys(Keys.ARROW_DOWN)
    at('picker-active-option')
    search(b, 'zzqxv')
    at('picker-no-match')
    at('request', '#biller-missing', 'request')
    b.type('#request-url', 'not a website')
    b.click('#request-submit')
    b.wait(lambda: b.visible('#request-error'), 'the website error')
    at('request-error')
    b.click('#close')
    b.wait(lambda: b.visible('#confirm-stay'), 'the confirm dialog')
    at('confirm')
    b.click('#confirm-stay')
    b.type('#request-url', REQUEST_HOST)
    at('requested', '#request-submit', 'requested')
    b.click('#requested-back')
    pick(b, 'sandbox gas', 'Sandbox Gas Co.', shot=False)
    at('credentials', screen='credentials')
    login(b, 'user_good', 'wrong')
    b.wait(lambda: b.screen_now() == 'credentials' and b.visible('#cred-error'),
           'the credentials error')
    at('credentials-error')
    login(b, 'user_locked', 'pass_good')
    check(until_outcome(b, shot_progress=False) == 'error', 'no error: %s' % b.screen_now())
    at('error-locked')
    b.click('#error-retry')
    b.screen('credentials')
    b.js(HOLD_JS)
    login(b, 'user_mfa', 'pass_good')
    at('progress', screen='progress')
    b.js('window.bdsRelease()')
    at('mfa', screen='mfa')
    b.type('#mfa-code', '0000')
    b.click('#mfa-submit')
    b.wait(lambda: b.screen_now() == 'mfa' and b.visible('#mfa-error'), 'the MFA error')
    at('mfa-error')
    b.type('#mfa-code', '1234')
    at('success', '#mfa-submit', 'success')
    b.reload()
    at('linked', screen='linked')

    lt2 = link_token(client_user_id='web-axe-exit-' + lang, hosted=True, language=lang)
    b.get(lt2['hosted_url'])
    b.screen('consent')
    at('exit', '#close', 'exit')
    b.assert_clean([LINK])
    return {'link_token': lt['link_token'], 'screens_checked': seen}


def axe_en(b):
    return axe_walk(b, 'en')


def axe_es(b):
    return axe_walk(b, 'es')


SCENARIOS = {
    'embedded': (embedded, {}),
    'not_allowed': (not_allowed, {}),
    'hosted': (hosted, {}),
    'mfa': (mfa, {}),
    'wrong_password': (wrong_password, {}),
    'exit': (exit_flow, {}),
    'keyboard': (keyboard, {'width': 320, 'height': 720}),
    'es': (spanish, {}),
    'refused': (refused, {}),
    'unsure': (unsure, {}),
    'update': (update, {}),
    'too_many': (too_many, {}),
    'resume': (resume, {}),
    'trust': (trust, {}),
    'done': (done, {}),
    'axe_en': (axe_en, {'lang': 'en'}),
    'axe_es': (axe_es, {'lang': 'es'}),
}


def main():
    return run('connect_flows.py', SCENARIOS, serve_site, lambda name, opts: Browser(name, **opts))


if __name__ == '__main__':
    sys.exit(main())
