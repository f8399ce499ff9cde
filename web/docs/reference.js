/*
 * The reference page (/docs/ on the api host): Redoc renders the service's
 * OpenAPI document, /v1/openapi.json, into #reference. A file of its own,
 * never inline: the page's CSP allows scripts from 'self' only.
 *
 * Nothing is fetched from another host: Redoc 2 loads no web font and
 * the theme names only local ones; the build took the one CDN image out
 * of the bundle (web/local.mk). What Redoc needs beyond the link pages'
 * CSP: docs/DECISIONS.md "(reference page)".
 */
(function () {
	'use strict';

	var root = document.getElementById('reference');
	var failed = document.getElementById('reference-failed');

	if (typeof Redoc === 'undefined' || root === null) {
		if (failed !== null)
			failed.hidden = false;
		return;
	}
	Redoc.init('/v1/openapi.json', {
		expandResponses: '200,201,202',
		jsonSampleExpandLevel: 3,
		sortPropsAlphabetically: false,
		pathInMiddlePanel: true,
		theme: {
			typography: {
				fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
				headings: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif' },
				code: { fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace' }
			}
		}
	}, root, function (err) {
		if (err && failed !== null)
			failed.hidden = false;
		document.body.setAttribute('data-reference', err ? 'failed' : 'ready');
	});
}());
