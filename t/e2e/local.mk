# End-to-end suites: each starts the real stack (PostgreSQL, nginx, bds-api,
# bds-deliver) through the harness; the shared pieces are one library.
check_LIBRARIES += %reldir%/libe2e.a
%canon_reldir%_libe2e_a_SOURCES = \
	%reldir%/harness.c %reldir%/harness.h \
	%reldir%/accounts.c %reldir%/accounts.h \
	%reldir%/devacct.c %reldir%/devacct.h \
	%reldir%/fleet.c %reldir%/fleet.h \
	%reldir%/receiver.c %reldir%/receiver.h \
	%reldir%/record.c %reldir%/record.h \
	%reldir%/smtp_sink.c %reldir%/smtp_sink.h
# The longest suites come first, so that a parallel `make check` does not
# end with one of them running alone (each is described where its sources
# are named below).
E2E_SUITES += %reldir%/check_e2e_browser %reldir%/check_e2e_openapi_fuzz \
	%reldir%/check_e2e_fleet %reldir%/check_e2e_pay_browser
E2E_SUITES += %reldir%/check_e2e_core %reldir%/check_e2e_faults %reldir%/check_e2e_mail \
	%reldir%/check_e2e_accounts_signup %reldir%/check_e2e_accounts_session \
	%reldir%/check_e2e_accounts_live %reldir%/check_e2e_accounts_throttle \
	%reldir%/check_e2e_clients \
	%reldir%/check_e2e_secrets %reldir%/check_e2e_webhooks \
	%reldir%/check_e2e_delivery %reldir%/check_e2e_events \
	%reldir%/check_e2e_schema %reldir%/check_e2e_queue %reldir%/check_e2e_jobs \
	%reldir%/check_e2e_billers \
	%reldir%/check_e2e_links \
	%reldir%/check_e2e_connect %reldir%/check_e2e_sandbox_links
# the bill read API
E2E_SUITES += %reldir%/check_e2e_bills
# the bills sync
E2E_SUITES += %reldir%/check_e2e_bills_sync
# statement documents
E2E_SUITES += %reldir%/check_e2e_bills_statement
# the bill status lifecycle
E2E_SUITES += %reldir%/check_e2e_bills_status
# scheduled refresh, operators, the vault
E2E_SUITES += %reldir%/check_e2e_refresh
# requests to link and biller discovery
E2E_SUITES += %reldir%/check_e2e_rtl
# insights: the engine in bds-jobs, the routes, the lifecycle and its events
E2E_SUITES += %reldir%/check_e2e_insights
# pay: tokens, cards, sessions, the gated and the sandbox payments, nothing
# of a card kept
E2E_SUITES += %reldir%/check_e2e_pay
# customer messages: the input rules, suppressions, consents, complaints,
# the events at a receiver, tenants and environments
E2E_SUITES += %reldir%/check_e2e_messages
# usage metering: exact counts over four workers, a worker killed -9, the
# computed metrics, who reads what
E2E_SUITES += %reldir%/check_e2e_metering
# the connect page (headers, frame policy, session extras), and
# check_e2e_browser (first): the same in a real browser (Debian chromium,
# chromedriver, selenium)
%canon_reldir%_libe2e_a_SOURCES += %reldir%/webpage.c %reldir%/webpage.h
E2E_SUITES += %reldir%/check_e2e_web
# the biller simulator for the suites, and the portal connector end to end
%canon_reldir%_libe2e_a_SOURCES += %reldir%/sim.c %reldir%/sim.h
E2E_SUITES += %reldir%/check_e2e_portal
# bill imports in bds-jobs: the extraction of hostile and good documents,
# the extractor's limits, duplicates, the expiry and document sweeps
E2E_SUITES += %reldir%/check_e2e_imports_jobs
# check_e2e_fleet (first): 1,000 portal accounts under the per-biller
# limit, the credential scan
# the error catalogue's page and every docs_url pointing at it
E2E_SUITES += %reldir%/check_e2e_errors
# the OpenAPI document served (/v1/openapi.json, .yaml) and the reference
# page (/docs/, Redoc) in a real browser
E2E_SUITES += %reldir%/check_e2e_reference
# check_e2e_openapi_fuzz (first): the OpenAPI document against the
# service, t/openapi/fuzz.py (hypothesis)
# the TypeScript SDK generated from docs/openapi.yaml, and its quickstart run
# with node against the stack (sdk/typescript)
E2E_SUITES += %reldir%/check_e2e_sdk
# the README's quickstart blocks ("sh quickstart"), extracted and run as written
E2E_SUITES += %reldir%/check_e2e_readme
# bill imports: create, the signed upload nginx writes into a file,
# complete_upload, GET/DELETE, the source document
E2E_SUITES += %reldir%/check_e2e_imports
# reviewing and confirming bill imports: the draft, its versions, the bill
E2E_SUITES += %reldir%/check_e2e_imports_review
# check_e2e_pay_browser (first): the hosted card page (/pay on the link
# host) in a real browser: t/browser/pay_card.py, as check_e2e_browser
# anonymous sandboxes: the journey, the inbox, the claim and its grace, the
# expiry sweep, the evaluation proof verified with openssl
E2E_SUITES += %reldir%/check_e2e_sandboxes
# tenant isolation: every id-taking route of the table (bds-api --routes)
# called with another tenant's id and with an unknown one, alike
E2E_SUITES += %reldir%/check_e2e_isolation
# partitions: events and deliveries in pg_partman's monthly partitions, rows
# landing in their month, retention dropping months, a migration keeping rows
E2E_SUITES += %reldir%/check_e2e_partitions
