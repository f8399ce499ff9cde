/* The biller picker: a combobox (WAI-ARIA 1.2 "list autocomplete") over
 * GET /v1/link-sessions/billers. Typing searches after a pause; ArrowDown /
 * ArrowUp / Home / End move through the options (aria-activedescendant,
 * focus stays in the input), Enter chooses, Escape clears the list. A slow
 * answer that arrives after a newer one is dropped. */
(function (w) {
  'use strict';

  var BDS = w.BDS = w.BDS || {};
  var DEBOUNCE_MS = 250;
  var LIMIT = 8;

  /* opts: input, list, status (live region), empty (no-match paragraph),
   * search(term) -> Promise of {status, body}, label(biller) -> secondary
   * text, choose(biller), t(key, vars). */
  function Picker(opts) {
    this.o = opts;
    this.items = [];
    this.active = -1;
    this.seq = 0;
    this.timer = null;
    var self = this;
    opts.input.addEventListener('input', function () { self.schedule(); });
    opts.input.addEventListener('keydown', function (e) { self.key(e); });
    opts.list.addEventListener('mousedown', function (e) { e.preventDefault(); });
    opts.list.addEventListener('click', function (e) {
      var li = e.target.closest('[role="option"]');
      if (li) self.choose(Number(li.getAttribute('data-index')));
    });
  }

  Picker.prototype.schedule = function () {
    var self = this;
    if (this.timer !== null) w.clearTimeout(this.timer);
    this.timer = w.setTimeout(function () {
      self.timer = null;
      self.search();
    }, DEBOUNCE_MS);
  };

  /* Search now (also the first list, with an empty term). */
  Picker.prototype.search = function () {
    var self = this;
    var term = this.o.input.value.trim();
    var seq = ++this.seq;
    this.o.list.setAttribute('aria-busy', 'true');
    return this.o.search(term, LIMIT).then(function (res) {
      if (seq !== self.seq) return;	/* a newer search is under way */
      self.o.list.removeAttribute('aria-busy');
      if (res.status !== 200 || !res.body || !Array.isArray(res.body.data)) {
        self.render([], term, null);
        self.o.fail(res);
        return;
      }
      self.render(res.body.data, term, res.body);
    });
  };

  /* Two letters for a biller without a logo: its first two words'
   * initials ("Sandbox Water Works" -> "SW"), or its first two letters. */
  function monogram(name) {
    var words = String(name || '?').split(/[^0-9A-Za-z\u00C0-\u024F]+/).filter(Boolean);
    if (words.length >= 2) return (words[0][0] + words[1][0]).toUpperCase();
    return (words[0] || '?').slice(0, 2).toUpperCase();
  }

  /* A logo the link host serves (a path on it, so CSP img-src 'self'
   * holds), else the monogram; decorative either way (the name follows). */
  function badge(b) {
    var el;
    if (typeof b.logo_src === 'string' && /^\/[^/\\]/.test(b.logo_src)) {
      el = document.createElement('img');
      el.className = 'logo';
      el.alt = '';
      el.width = 32;
      el.height = 32;
      el.src = b.logo_src;
      /* a stored logo that went missing: the monogram instead */
      el.addEventListener('error', function () {
        if (el.parentNode) el.parentNode.replaceChild(letters(b), el);
      });
      return el;
    }
    return letters(b);
  }

  function letters(b) {
    var el = document.createElement('span');
    el.className = 'monogram';
    el.setAttribute('aria-hidden', 'true');
    el.textContent = monogram(b.name);
    return el;
  }

  /* "Showing 8 of 381 billers" (no term) or "Showing 2 of 2 matches". */
  Picker.prototype.count = function (n, term, page) {
    var t = this.o.t;
    var total = page && typeof page.total_count === 'number' ? page.total_count : n;
    var matches = page && typeof page.match_count === 'number' ? page.match_count : n;
    if (term) {
      if (n === 0) return t('picker.no_match_status');
      return t(matches === 1 ? 'picker.showing_match_one' : 'picker.showing_matches',
        { n: n, total: matches });
    }
    return t(total === 1 ? 'picker.showing_one' : 'picker.showing', { n: n, total: total });
  };

  Picker.prototype.render = function (items, term, page) {
    var o = this.o;
    var i, li, text, name, sub;
    this.items = items;
    this.active = -1;
    while (o.list.firstChild) o.list.removeChild(o.list.firstChild);
    for (i = 0; i < items.length; i++) {
      li = document.createElement('li');
      li.id = 'biller-opt-' + i;
      li.className = 'option';
      li.setAttribute('role', 'option');
      li.setAttribute('aria-selected', 'false');
      li.setAttribute('data-index', String(i));
      li.setAttribute('data-biller-id', items[i].id);
      text = document.createElement('span');
      text.className = 'option-text';
      name = document.createElement('span');
      name.className = 'option-name';
      name.textContent = items[i].name;
      sub = document.createElement('span');
      sub.className = 'muted small';
      sub.textContent = o.label(items[i]);
      text.appendChild(name);
      text.appendChild(sub);
      li.appendChild(badge(items[i]));
      li.appendChild(text);
      o.list.appendChild(li);
    }
    o.list.setAttribute('data-term', term);	/* what the list shows results for */
    o.input.setAttribute('aria-expanded', items.length ? 'true' : 'false');
    o.input.removeAttribute('aria-activedescendant');
    if (items.length === 0 && term) {
      o.empty.textContent = o.t('picker.none', { term: term });
      o.empty.hidden = false;
    } else {
      o.empty.hidden = true;
    }
    o.status.textContent = page === null ? '' : this.count(items.length, term, page);
  };

  Picker.prototype.move = function (to) {
    var n = this.items.length;
    var prev = this.active >= 0 ? this.o.list.children[this.active] : null;
    var li;
    if (n === 0) return;
    if (to < 0) to = n - 1;
    if (to >= n) to = 0;
    if (prev) prev.setAttribute('aria-selected', 'false');
    this.active = to;
    li = this.o.list.children[to];
    li.setAttribute('aria-selected', 'true');
    this.o.input.setAttribute('aria-activedescendant', li.id);
    if (li.scrollIntoView) li.scrollIntoView({ block: 'nearest' });
  };

  Picker.prototype.key = function (e) {
    switch (e.key) {
      case 'ArrowDown':
        e.preventDefault();
        this.move(this.active + 1);
        break;
      case 'ArrowUp':
        e.preventDefault();
        this.move(this.active < 0 ? this.items.length - 1 : this.active - 1);
        break;
      case 'Home':
        if (this.active >= 0) { e.preventDefault(); this.move(0); }
        break;
      case 'End':
        if (this.active >= 0) { e.preventDefault(); this.move(this.items.length - 1); }
        break;
      case 'Enter':
        e.preventDefault();
        if (this.active >= 0) this.choose(this.active);
        else if (this.items.length === 1) this.choose(0);
        break;
      case 'Escape':
        if (this.active >= 0) {
          e.preventDefault();
          this.o.list.children[this.active].setAttribute('aria-selected', 'false');
          this.active = -1;
          this.o.input.removeAttribute('aria-activedescendant');
        }
        break;
      default:
        break;
    }
  };

  Picker.prototype.choose = function (i) {
    if (i >= 0 && i < this.items.length) this.o.choose(this.items[i]);
  };

  BDS.Picker = Picker;
}(window));
