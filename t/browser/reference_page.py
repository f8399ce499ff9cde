#!/usr/bin/python3
"""The API reference and the OpenAPI document, as a reader gets them.

Run by t/e2e/check_e2e_reference.c against its stack:

    /usr/bin/python3 t/browser/reference_page.py page
    /usr/bin/python3 t/browser/reference_page.py document

page: Debian's chromium, headless (chromium-driver, python3-selenium),
opens /docs/ on the api host and waits until Redoc has rendered
/v1/openapi.json: an operation's summary (the document's first operation
with one) is visible in the middle panel, and a search for it, which
runs in Redoc's blob: worker, lists it. Then the console must hold no
error (any SEVERE entry, a Content-Security-Policy violation among them)
and the network log no request to another origin (Redoc's default web
fonts included). A screenshot goes to BDS_ARTIFACTS/reference-page.png
(reference-failure.png when it fails).

document: GET /v1/openapi.json and /v1/openapi.yaml on the api and
sandbox hosts; the four parse (the YAML as scripts/openapi-json reads it:
YAML 1.2 scalars) to one and the same document, an OpenAPI 3.1 one.

Environment: BDS_API_URL (api host), BDS_SANDBOX_URL, BDS_SRCDIR,
BDS_ARTIFACTS. Exit 0 when it passed, 1 when it failed (the reason on
stderr), 77 when chromium is not installed (page only).
"""

import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
import urllib.parse
import urllib.request

CHROMIUM = '/usr/bin/chromium'
CHROMEDRIVER = '/usr/bin/chromedriver'
WAIT = 60

ENV = os.environ
API = ENV['BDS_API_URL'].rstrip('/')
SANDBOX = ENV.get('BDS_SANDBOX_URL', '').rstrip('/')
SRCDIR = ENV.get('BDS_SRCDIR', '.')
ARTIFACTS = ENV.get('BDS_ARTIFACTS', '.')


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def openapi_json():
    """scripts/openapi-json as a module: its YAML loader."""
    path = os.path.join(SRCDIR, 'scripts', 'openapi-json')
    loader = importlib.machinery.SourceFileLoader('openapi_json', path)
    spec = importlib.util.spec_from_loader('openapi_json', loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def fetch(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        check(r.status == 200, '%s: %d' % (url, r.status))
        return r.read()


def first_summary(doc):
    """(path, method, summary) of the document's first operation with a
    summary, in the document's order."""
    for path, item in (doc.get('paths') or {}).items():
        for method in ('get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'):
            op = item.get(method)
            if isinstance(op, dict) and op.get('summary'):
                return path, method, op['summary']
    raise Failure('the document has no operation with a summary')


# ---- document ---------------------------------------------------------------

def document():
    yaml_load = openapi_json()
    docs = {}
    for base in (API, SANDBOX):
        docs[base + '/v1/openapi.json'] = json.loads(fetch(base + '/v1/openapi.json'))
        with tempfile.NamedTemporaryFile(suffix='.yaml') as f:
            f.write(fetch(base + '/v1/openapi.yaml'))
            f.flush()
            docs[base + '/v1/openapi.yaml'] = yaml_load.load(f.name)
    urls = list(docs)
    first = docs[urls[0]]
    check(isinstance(first, dict) and str(first.get('openapi', '')).startswith('3.1'),
          '%s: not an OpenAPI 3.1 document' % urls[0])
    for u in urls[1:]:
        check(docs[u] == first, '%s and %s differ' % (urls[0], u))
    print('document: %d paths, the same at %s' % (len(first.get('paths') or {}), ', '.join(urls)))


# ---- page -------------------------------------------------------------------

def page():
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        print('skip: chromium or chromium-driver is not installed', file=sys.stderr)
        sys.exit(77)
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    doc = json.loads(fetch(API + '/v1/openapi.json'))
    path, method, summary = first_summary(doc)
    origin = urllib.parse.urlsplit(API)
    origin = '%s://%s' % (origin.scheme, origin.netloc)

    profile = tempfile.mkdtemp(prefix='bds-chromium-')
    o = webdriver.ChromeOptions()
    o.binary_location = CHROMIUM
    for a in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu',
              '--no-first-run', '--no-default-browser-check', '--disable-extensions',
              '--disable-background-networking', '--disable-sync',
              '--disable-component-update', '--disable-default-apps',
              '--user-data-dir=' + profile, '--window-size=1400,1000'):
        o.add_argument(a)
    o.set_capability('goog:loggingPrefs', {'browser': 'ALL', 'performance': 'ALL'})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=o)
    d.set_page_load_timeout(30)
    console, requests = [], []

    def drain():
        console.extend(d.get_log('browser'))
        for e in d.get_log('performance'):
            m = json.loads(e['message'])['message']
            if m.get('method') == 'Network.requestWillBeSent':
                requests.append(m['params']['request']['url'])

    def wait(fn, what):
        try:
            return WebDriverWait(d, WAIT, poll_frequency=0.1).until(lambda _: fn())
        except TimeoutException:
            raise Failure('timed out waiting for %s' % what)

    def shown(xpath):
        return [e for e in d.find_elements(By.XPATH, xpath) if e.is_displayed()]

    lit = json.dumps(summary) if "'" in summary else "'%s'" % summary
    if "'" in summary and '"' in summary:
        raise Failure('summary %r has both quote kinds' % summary)
    try:
        d.get(API + '/docs/')
        wait(lambda: d.find_element(By.TAG_NAME, 'body').get_attribute('data-reference'),
             'Redoc to render /v1/openapi.json')
        check(d.find_element(By.TAG_NAME, 'body').get_attribute('data-reference') == 'ready',
              'Redoc could not render the document')
        # the operation's heading in the middle panel
        wait(lambda: shown('//h2[contains(normalize-space(.), %s)]' % lit),
             'the summary %r of %s %s' % (summary, method.upper(), path))
        # the search: Redoc's worker (a blob: URL) indexes and finds it
        box = wait(lambda: shown('//div[@role="search"]//input'), 'the search box')[0]
        box.send_keys(summary)
        wait(lambda: shown('//*[@data-role="search:results"]//li[contains(normalize-space(.), %s)]'
                           % lit), 'a search result for %r' % summary)
        time.sleep(0.5)  # late console entries
        d.save_screenshot(os.path.join(ARTIFACTS, 'reference-page.png'))
        drain()
        errors = [m for m in console if m['level'] == 'SEVERE'
                  or 'Content Security Policy' in m['message']]
        check(not errors, 'console: %s' % '; '.join(m['message'] for m in errors))
        # the browser's own pages (chrome://, its new tab before the
        # first get) are not the page's
        foreign = [u for u in requests
                   if not (u == origin or u.startswith(origin + '/')
                           or u.startswith('blob:' + origin + '/') or u.startswith('data:')
                           or u.startswith('chrome://'))]
        check(not foreign, 'requests to another origin: %s' % ', '.join(foreign))
        # every style element Redoc added was admitted (a blocked one has no
        # sheet) and its rules are there
        sheets = d.execute_script(
            "return Array.prototype.map.call(document.querySelectorAll('style'),"
            " function (s) { return s.sheet ? s.sheet.cssRules.length : -1; });")
        check(sheets and min(sheets) >= 0, 'a style element was blocked: %r' % sheets)
        check(sum(sheets) > 100, 'only %d style rules: %r' % (sum(sheets), sheets))
        print('page: %r (%s %s) shown and found; %d requests, all to %s' %
              (summary, method.upper(), path, len(requests), origin))
    except Exception:
        try:
            d.save_screenshot(os.path.join(ARTIFACTS, 'reference-failure.png'))
            drain()
            for m in console[-20:]:
                print('console: %s %s' % (m['level'], m['message']), file=sys.stderr)
        except Exception:  # noqa: BLE001 (the browser went away)
            pass
        raise
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main():
    modes = {'page': page, 'document': document}
    if len(sys.argv) != 2 or sys.argv[1] not in modes:
        print('usage: reference_page.py page|document', file=sys.stderr)
        return 2
    try:
        modes[sys.argv[1]]()
        return 0
    except Failure as e:
        print('%s: FAIL: %s' % (sys.argv[1], e), file=sys.stderr)
    except Exception:  # noqa: BLE001 (selenium's own errors: report, fail)
        traceback.print_exc()
    return 1


if __name__ == '__main__':
    sys.exit(main())
