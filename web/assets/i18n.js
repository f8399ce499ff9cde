/* Message catalogs of the link host's pages: web/i18n/<lang>.json, one flat
 * object of key -> text with {name} placeholders. Text only ever goes in
 * with textContent, never as HTML. */
(function (w) {
  'use strict';

  var BDS = w.BDS = w.BDS || {};
  var SUPPORTED = ['en', 'es'];
  var msgs = {};
  var vars = {};

  /* The catalog for a BCP-47 tag: its primary subtag when we have it
   * ("es-MX" -> "es"), else English. */
  function pick(tag) {
    var primary = String(tag || '').toLowerCase().split('-')[0];
    return SUPPORTED.indexOf(primary) >= 0 ? primary : 'en';
  }

  /* A value inside a sentence, isolated (FSI … PDI): a name with its own
   * direction marks (a right-to-left override) cannot turn the sentence
   * around it. */
  function isolate(v) {
    return '\u2068' + String(v) + '\u2069';
  }

  function fill(text, extra) {
    return text.replace(/\{(\w+)\}/g, function (m, name) {
      if (extra && Object.prototype.hasOwnProperty.call(extra, name)) return isolate(extra[name]);
      if (Object.prototype.hasOwnProperty.call(vars, name)) return isolate(vars[name]);
      return m;
    });
  }

  function t(key, extra) {
    var text = Object.prototype.hasOwnProperty.call(msgs, key) ? msgs[key] : null;
    return text === null ? key : fill(text, extra);
  }

  function has(key) {
    return Object.prototype.hasOwnProperty.call(msgs, key);
  }

  /* Every data-i18n / data-i18n-label element under root gets its text. */
  function apply(root) {
    var els = (root || document).querySelectorAll('[data-i18n]');
    var i;
    for (i = 0; i < els.length; i++) {
      if (has(els[i].getAttribute('data-i18n'))) els[i].textContent = t(els[i].getAttribute('data-i18n'));
    }
    els = (root || document).querySelectorAll('[data-i18n-label]');
    for (i = 0; i < els.length; i++) {
      if (has(els[i].getAttribute('data-i18n-label'))) {
        els[i].setAttribute('aria-label', t(els[i].getAttribute('data-i18n-label')));
      }
    }
  }

  /* Load a language's catalog (same origin): resolves to the language
   * actually in use; on any failure the previous catalog stays. */
  function load(tag) {
    var lang = pick(tag);
    return fetch('/i18n/' + lang + '.json', { credentials: 'omit', cache: 'no-cache' })
      .then(function (r) {
        if (!r.ok) throw new Error('catalog ' + r.status);
        return r.json();
      })
      .then(function (m) {
        msgs = m;
        BDS.i18n.lang = lang;
        document.documentElement.lang = lang;
        return lang;
      })
      .catch(function () { return BDS.i18n.lang; });
  }

  BDS.i18n = {
    lang: 'en',
    pick: pick,
    load: load,
    t: t,
    has: has,
    apply: apply,
    set: function (name, value) { vars[name] = value; }
  };
}(window));
