# What the build adds to the served pages, in the build tree's web/
# (nginx's $bds_web_build: nginx/bds-api-host.conf): the OpenAPI document
# at /v1/openapi.json (JSON, made from docs/openapi.yaml by
# scripts/openapi-json) and /v1/openapi.yaml (the file as is), and Redoc's
# standalone bundle for the reference page /docs/ (web/docs/index.html),
# copied from tools/npm/node_modules (scripts/npm-tools) with one edit: its
# sidebar's "API docs by Redocly" logo, an <img> from cdn.redoc.ly, gets an
# empty src (nothing is fetched; the component's onError hides it), so the
# page makes no request to another host. scripts/sri-check then checks the
# copy and web/docs/reference.js against the page's integrity attributes. `make install` puts them in
# $(pkgdatadir)/web, the installed web/ directory (docs/deploy.md).
webv1dir = $(pkgdatadir)/web/v1
webv1_DATA = %reldir%/v1/openapi.json %reldir%/v1/openapi.yaml
webdocsdir = $(pkgdatadir)/web/docs
webdocs_DATA = %reldir%/docs/redoc.standalone.js
CLEANFILES += $(webv1_DATA) $(webdocs_DATA)
REDOC_BUNDLE = $(NPM_MODULES)/redoc/bundles/redoc.standalone.js
# the unpacked dist has no node_modules: the original tree's
AM_DISTCHECK_CONFIGURE_FLAGS = NPM_MODULES=$(abs_top_srcdir)/tools/npm/node_modules
EXTRA_DIST += tools/npm/package.json tools/npm/package-lock.json

%reldir%/v1/openapi.json: $(srcdir)/docs/openapi.yaml $(srcdir)/scripts/openapi-json
	$(AM_V_GEN)$(MKDIR_P) %reldir%/v1 && \
	/usr/bin/python3 $(srcdir)/scripts/openapi-json $(srcdir)/docs/openapi.yaml > $@.tmp && mv $@.tmp $@
%reldir%/v1/openapi.yaml: $(srcdir)/docs/openapi.yaml
	$(AM_V_GEN)$(MKDIR_P) %reldir%/v1 && cp $(srcdir)/docs/openapi.yaml $@.tmp && mv $@.tmp $@
%reldir%/docs/redoc.standalone.js: $(REDOC_BUNDLE) $(srcdir)/%reldir%/docs/index.html \
	    $(srcdir)/%reldir%/docs/reference.js $(srcdir)/scripts/sri-check
	$(AM_V_GEN)$(MKDIR_P) %reldir%/docs && \
	sed 's|src:"https://cdn\.redoc\.ly/redoc/logo-mini\.svg"|src:""|' $(REDOC_BUNDLE) > $@.tmp && \
	if grep -q 'cdn\.redoc\.ly' $@.tmp; then \
	    echo "$(REDOC_BUNDLE): still names cdn.redoc.ly after the logo edit" >&2; exit 1; fi && \
	/usr/bin/python3 $(srcdir)/scripts/sri-check $(srcdir)/%reldir%/docs/index.html \
	    /docs/redoc.standalone.js=$@.tmp \
	    /docs/reference.js=$(srcdir)/%reldir%/docs/reference.js && \
	mv $@.tmp $@
$(REDOC_BUNDLE):
	@echo "$@ is missing: run scripts/npm-tools first (npm ci of tools/npm)" >&2; exit 1

# The card page (web/pay/index.html, served as /pay on the link host;
# installed with the rest of web/) names every script and stylesheet with
# its Subresource Integrity: `make check` checks each attribute against
# the file (scripts/sri-check), so a change to /assets/connect.css,
# /assets/i18n.js or the page's own files cannot ship with a page the
# browser would refuse to run. The check must also bite: a copy of the
# page with one file one byte longer has to fail.
PAY_SRI_FILES = /assets/connect.css=$(srcdir)/web/assets/connect.css \
	/assets/i18n.js=$(srcdir)/web/assets/i18n.js \
	/pay/pay.css=$(srcdir)/web/pay/pay.css \
	/pay/pay.js=$(srcdir)/web/pay/pay.js
check-local: check-pay-sri
check-pay-sri:
	@/usr/bin/python3 $(srcdir)/scripts/sri-check $(srcdir)/web/pay/index.html \
	    $(PAY_SRI_FILES) || { echo "FAIL: web/pay/index.html: integrity"; exit 1; }
	@tmp=`mktemp` && trap 'rm -f "$$tmp"' EXIT && \
	cat $(srcdir)/web/pay/pay.js > "$$tmp" && echo >> "$$tmp" && \
	if /usr/bin/python3 $(srcdir)/scripts/sri-check $(srcdir)/web/pay/index.html \
	    $(PAY_SRI_FILES) /pay/pay.js="$$tmp" 2>/dev/null; then \
	    echo "FAIL: scripts/sri-check took a changed /pay/pay.js"; exit 1; fi
	@echo "PASS: web/pay/index.html: integrity of every script and stylesheet"
.PHONY: check-pay-sri
