/*
 * The reference page (/docs/ on the api host): Redoc renders the service's
 * OpenAPI document, /v1/openapi.json, into #reference. A file of its own,
 * never inline: the page's CSP allows scripts from 'self' only.
 *
 * Redoc's components add <style> elements as they render; the page's CSP
 * admits a style element only with the nonce nginx writes per response into
 * <meta name="bds-style-nonce"> (nginx/bds-api-host.conf), and Redoc's
 * `nonce` option puts it on every one. Nothing is fetched from anywhere
 * else (Redoc 2 loads no web font; the theme names only local fonts).
 */
(function () {
	'use strict';

	var root = document.getElementById('reference');
	var meta = document.querySelector('meta[name="bds-style-nonce"]');
	var failed = document.getElementById('reference-failed');

	if (typeof Redoc === 'undefined' || root === null) {
		if (failed !== null)
			failed.hidden = false;
		return;
	}
	Redoc.init('/v1/openapi.json', {
		nonce: meta !== null ? meta.content : undefined,
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
