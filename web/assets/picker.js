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
        self.render([], term);
        self.o.fail(res);
        return;
      }
      self.render(res.body.data, term);
    });
  };

  Picker.prototype.render = function (items, term) {
    var o = this.o;
    var i, li, name, sub;
    this.items = items;
    this.active = -1;
    while (o.list.firstChild) o.list.removeChild(o.list.firstChild);
    for (i = 0; i < items.length; i++) {
      li = document.createElement('li');
      li.id = 'biller-opt-' + i;
      li.setAttribute('role', 'option');
      li.setAttribute('aria-selected', 'false');
      li.setAttribute('data-index', String(i));
      li.setAttribute('data-biller-id', items[i].id);
      name = document.createElement('span');
      name.className = 'option-name';
      name.textContent = items[i].name;
      sub = document.createElement('span');
      sub.className = 'muted small';
      sub.textContent = o.label(items[i]);
      li.appendChild(name);
      li.appendChild(sub);
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
    o.status.textContent = items.length === 1 ? o.t('picker.count_one') :
      o.t('picker.count', { n: items.length });
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
