"""What the page scripts of t/browser/ share: Debian's chromium, headless,
through chromium-driver and python3-selenium; a failure that names its
reason; the API called as a client's backend does; the browser with its
console and network log; axe-core on a screen; and the run of one
scenario (artifacts, the result file, a screenshot and the console's tail
when it fails).

Importing it exits 77 (the test harness's "skipped") when chromium or
its driver is not installed.
"""

import json
import os
import re
import shutil
import sys
import tempfile
import traceback
import urllib.error
import urllib.request

CHROMIUM = '/usr/bin/chromium'
CHROMEDRIVER = '/usr/bin/chromedriver'

if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
    print('skip: chromium or chromium-driver is not installed', file=sys.stderr)
    sys.exit(77)

from selenium import webdriver  # noqa: E402  (python3-selenium)
from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402  (the scripts')
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

__all__ = ['By', 'Keys', 'WAIT', 'AXE', 'Failure', 'check', 'api_request', 'Browser',
           'axe_check', 'run']

WAIT = 20
AXE = os.path.join(os.environ.get('BDS_NPM_MODULES') or
                   os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                                'tools', 'npm', 'node_modules'), 'axe-core', 'axe.min.js')


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def api_request(base, method, path, body=None, bearer=None, headers=None):
    """One JSON call: (status, the decoded body)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header('Accept', 'application/json')
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    if data is not None:
        req.add_header('Content-Type', 'application/json')
    if bearer:
        req.add_header('Authorization', 'Bearer ' + bearer)
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.status, json.loads(r.read() or b'null')
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b'null')


class Browser:
    """One headless chromium. Screenshots go to artifacts as
    <shot_prefix><scenario>-<name>.png; link is the link host's base URL
    (assert_clean wants a request to it)."""

    def __init__(self, scenario, artifacts, link, shot_prefix='', width=900, height=1000,
                 lang=None, extra_args=()):
        self.scenario = scenario
        self.artifacts = artifacts
        self.link = link
        self.shot_prefix = shot_prefix
        self.profile = tempfile.mkdtemp(prefix='bds-chromium-')
        o = webdriver.ChromeOptions()
        o.binary_location = CHROMIUM
        for a in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu',
                  '--no-first-run', '--no-default-browser-check', '--disable-extensions',
                  '--disable-background-networking', '--disable-sync',
                  '--disable-component-update', '--disable-default-apps',
                  '--user-data-dir=' + self.profile,
                  '--window-size=%d,%d' % (width, height)) + tuple(extra_args):
            o.add_argument(a)
        if lang:
            # the language the page starts in before anything names one
            o.add_argument('--lang=' + lang)
            o.add_experimental_option('prefs', {'intl.accept_languages': lang})
        o.set_capability('goog:loggingPrefs', {'browser': 'ALL', 'performance': 'ALL'})
        self.d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=o)
        self.d.set_page_load_timeout(30)
        self.d.set_script_timeout(60)
        if width < 500:
            # a headless window is never narrower than 500 px: emulate the
            # phone's viewport instead
            self.d.execute_cdp_cmd('Emulation.setDeviceMetricsOverride', {
                'width': width, 'height': height, 'deviceScaleFactor': 1, 'mobile': True})
        self.console = []
        self.requests = []	# (method, url)
        self.shots = []

    def quit(self):
        try:
            self.d.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    def drain(self):
        """Move the browser's buffered logs into self.console / self.requests."""
        self.console += self.d.get_log('browser')
        for e in self.d.get_log('performance'):
            m = json.loads(e['message'])['message']
            if m.get('method') == 'Network.requestWillBeSent':
                r = m['params']['request']
                self.requests.append((r['method'], r['url']))

    def urls(self):
        """Every URL requested so far."""
        self.drain()
        return [u for _, u in self.requests]

    def get(self, url):
        self.d.get(url)

    def reload(self):
        self.d.refresh()

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def wait(self, fn, what, timeout=WAIT):
        try:
            return WebDriverWait(self.d, timeout, poll_frequency=0.05).until(lambda d: fn())
        except TimeoutException:
            raise Failure('timed out waiting for %s (screen %s, url %s)' %
                          (what, self.screen_now(), self.d.current_url))

    def screen_now(self):
        try:
            return self.js("return document.body && document.body.getAttribute('data-screen')")
        except Exception:  # noqa: BLE001 (a frame that went away)
            return None

    def screen(self, name, timeout=WAIT):
        self.wait(lambda: self.screen_now() == name, 'screen ' + name, timeout)

    def shot(self, name):
        path = os.path.join(self.artifacts, '%s%s-%s.png' % (self.shot_prefix, self.scenario,
                                                             name))
        self.d.save_screenshot(path)
        self.shots.append(os.path.basename(path))

    def el(self, css):
        return self.d.find_element(By.CSS_SELECTOR, css)

    def click(self, css):
        self.el(css).click()

    def type(self, css, text):
        e = self.el(css)
        e.clear()
        e.send_keys(text)

    def visible(self, css):
        found = self.d.find_elements(By.CSS_SELECTOR, css)
        return bool(found) and found[0].is_displayed()

    def text(self, css):
        """The element's text without the isolates (FSI, PDI) round values."""
        return self.el(css).text.replace('\u2068', '').replace('\u2069', '')

    def value(self, css):
        return self.el(css).get_attribute('value')

    def active_id(self):
        return self.js('return document.activeElement && document.activeElement.id')

    def keys(self, *keys):
        ActionChains(self.d).send_keys(*keys).perform()

    def app_log(self):
        return self.js('return window.bdsLog || []')

    def assert_clean(self, origins):
        """No CSP or integrity refusal and no uncaught error in the console;
        every request to one of origins, and one at least to the link host."""
        urls = self.urls()
        bad = [m['message'] for m in self.console
               if 'Content Security Policy' in m['message'] or 'Refused to' in m['message']
               or 'integrity' in m['message'] or 'Uncaught' in m['message']]
        check(not bad, 'console: %s' % bad)
        # the browser's own pages (chrome://, data:) are not requests of the page
        foreign = [u for u in urls if re.match(r'(?:https?|wss?|ftp):', u)
                   and not any(u == o or u.startswith(o + '/') for o in origins)]
        check(not foreign, 'requests to other hosts: %s' % foreign)
        check(any(u.startswith(self.link + '/') for u in urls),
              'the network log saw no request to the link host')


AXE_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations']}).then(r => done({
  passes: r.passes.length,
  violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(' '))}))
}), e => done({error: String(e)}));
"""


def axe_check(b, where, seen):
    """axe-core on the screen shown: no violation; where joins seen."""
    check(os.path.exists(AXE), '%s is missing: run scripts/npm-tools' % AXE)
    if not b.js('return !!window.axe'):
        with open(AXE, encoding='utf-8') as f:
            b.js(f.read())
    out = b.d.execute_async_script(AXE_RUN)
    check('error' not in out, 'axe on %s: %s' % (where, out.get('error')))
    check(out['passes'] > 0, 'axe checked nothing on %s' % where)
    check(not out['violations'], 'axe on %s (%s): %s' %
          (where, b.js('return document.documentElement.lang'),
           json.dumps(out['violations'], ensure_ascii=False)))
    seen.append(where)


def run(script, scenarios, serve, browser):
    """The command line of a page script: one scenario of scenarios (name:
    (function, options)), the test servers serve() starts (a list, each
    shut down at the end), browser(name, options) the Browser. The
    scenario's result, with its screenshots, is written to BDS_RESULT.
    Exit 0 passed, 1 failed (the reason on stderr), 2 usage."""
    if len(sys.argv) != 2 or sys.argv[1] not in scenarios:
        print('usage: %s %s' % (script, '|'.join(scenarios)), file=sys.stderr)
        return 2
    name = sys.argv[1]
    fn, opts = scenarios[name]
    try:
        servers = serve()
    except Failure as e:
        print('%s: FAIL: %s' % (name, e), file=sys.stderr)
        return 1
    b = browser(name, opts)
    os.makedirs(b.artifacts, exist_ok=True)
    try:
        os.unlink(os.path.join(b.artifacts, '%s%s-failure.png' % (b.shot_prefix, name)))
    except FileNotFoundError:
        pass
    rc = 1
    try:
        result = fn(b)
        result['screens'] = b.shots
        with open(os.environ['BDS_RESULT'], 'w') as f:
            json.dump(result, f)
        rc = 0
    except Failure as e:
        print('%s: FAIL: %s' % (name, e), file=sys.stderr)
    except Exception:  # noqa: BLE001 (selenium's own errors: report, fail)
        traceback.print_exc()
    finally:
        if rc != 0:
            try:
                b.shot('failure')
                b.drain()
                for m in b.console[-20:]:
                    print('console: %s %s' % (m['level'], m['message']), file=sys.stderr)
            except Exception:  # noqa: BLE001
                pass
        b.quit()
        for s in servers:
            s.shutdown()
    return rc
