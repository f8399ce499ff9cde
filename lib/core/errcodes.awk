#!/usr/bin/awk -f
#
# The error catalogue (lib/core/errcodes.txt) in each form the project uses:
#   awk -f errcodes.awk -v out=h    errcodes.txt > errcodes.h     (C constants and table)
#   awk -f errcodes.awk -v out=html errcodes.txt > errors.html    (the docs page)
#   awk -f errcodes.awk -v out=yaml errcodes.txt > errors.yaml    (OpenAPI components)
#   awk -f errcodes.awk -v out=list errcodes.txt                  (CODE STATUSES, for checks)
# Plain POSIX awk (mawk, gawk, busybox): no extensions. A malformed,
# duplicate or unsorted line is an error naming it, and no output.

function fail(msg) {
	printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
	bad = 1
	exit 1
}

function cstr(s) {
	gsub(/\\/, "\\\\", s)
	gsub(/"/, "\\\"", s)
	return "\"" s "\""
}

function html(s) {
	gsub(/&/, "\\&amp;", s)
	gsub(/</, "\\&lt;", s)
	gsub(/>/, "\\&gt;", s)
	gsub(/"/, "\\&quot;", s)
	return s
}

# The first HTTP status of a STATUSES list; 0 when it has none (session, rejection).
function first_status(list,    k, parts, i) {
	k = split(list, parts, ",")
	for (i = 1; i <= k; i++)
		if (parts[i] ~ /^[0-9]+$/)
			return parts[i] + 0
	return 0
}

# "HTTP 429; a 200 answer ...; a link session's error_code" for the page.
function where(list,    k, parts, i, s, http) {
	k = split(list, parts, ",")
	s = ""
	http = ""
	for (i = 1; i <= k; i++) {
		if (parts[i] !~ /^[0-9]+$/ || parts[i] == "200")
			continue
		http = http (http == "" ? "" : ", ") parts[i]
	}
	if (http != "")
		s = "HTTP " http
	for (i = 1; i <= k; i++) {
		if (parts[i] == "200")
			s = s (s == "" ? "" : "; ") "HTTP 200: an account endpoint&#39;s answer {success, message, error_code}"
		if (parts[i] == "session")
			s = s (s == "" ? "" : "; ") "a link session&#39;s error_code"
		if (parts[i] == "rejection")
			s = s (s == "" ? "" : "; ") "a link&#39;s credential_rejection_reason (link.disconnected)"
	}
	return s
}

BEGIN {
	if (out != "h" && out != "html" && out != "yaml" && out != "list") {
		printf "errcodes.awk: set -v out=h|html|yaml|list\n" > "/dev/stderr"
		bad = 1
		exit 2
	}
	n = 0
}

/^#/ || /^[ \t]*$/ { next }

{
	line = $0
	code = $1
	statuses = $2
	if (code !~ /^[A-Z][A-Z0-9_]*$/)
		fail("bad code \"" code "\"")
	if (statuses !~ /^([0-9][0-9][0-9]|session|rejection)(,([0-9][0-9][0-9]|session|rejection))*$/)
		fail(code ": bad statuses \"" statuses "\"")
	sub(/^[^ \t]+[ \t]+[^ \t]+[ \t]+/, "", line)
	if (split(line, parts, / \| /) != 2 || parts[1] == "" || parts[2] == "")
		fail(code ": want \"meaning | fix\"")
	if (line ~ /\t/)
		fail(code ": a tab in the text")
	if (code in seen)
		fail("duplicate code " code)
	if (n > 0 && code < codes[n])
		fail(code " is out of order (after " codes[n] ")")
	seen[code] = 1
	n++
	codes[n] = code
	st[n] = statuses
	meaning[n] = parts[1]
	fix[n] = parts[2]
}

END {
	if (bad)
		exit 1
	if (n == 0) {
		printf "errcodes.awk: no codes\n" > "/dev/stderr"
		exit 1
	}
	if (out == "list")
		for (i = 1; i <= n; i++)
			printf "%s %s\n", codes[i], st[i]
	else if (out == "h")
		emit_h()
	else if (out == "html")
		emit_html()
	else
		emit_yaml()
}

function emit_h(    i) {
	print "/* Generated from lib/core/errcodes.txt by lib/core/errcodes.awk: do not edit. */"
	print "#ifndef BDS_ERRCODES_H"
	print "#define BDS_ERRCODES_H"
	print ""
	print "/* Each error code: ERR_LINK_NOT_FOUND is \"LINK_NOT_FOUND\". */"
	for (i = 1; i <= n; i++)
		printf "#define ERR_%s\t\"%s\"\n", codes[i], codes[i]
	print ""
	print "/* The catalogue: X(code, usual HTTP status or 0, meaning, fix). */"
	print "#define ERRCODES(X) \\"
	for (i = 1; i <= n; i++)
		printf "\tX(ERR_%s, %d, %s, %s)%s\n", codes[i], first_status(st[i]),
		    cstr(meaning[i]), cstr(fix[i]), i < n ? " \\" : ""
	printf "\n#define ERRCODES_N\t%d\n", n
	print ""
	print "#endif"
}

function emit_html(    i) {
	print "<!doctype html>"
	print "<!-- Generated from lib/core/errcodes.txt by lib/core/errcodes.awk: do not edit. -->"
	print "<html lang=\"en\">"
	print "<head>"
	print "<meta charset=\"utf-8\">"
	print "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
	print "<meta name=\"referrer\" content=\"no-referrer\">"
	print "<title>Error codes</title>"
	print "</head>"
	print "<body>"
	print "<main>"
	print "<h1>Error codes</h1>"
	print "<p>Every error answer carries <code>error_code</code> (one of the codes below),"
	print "<code>error_message</code> (what is wrong), <code>hint</code> (what to do),"
	print "<code>docs_url</code> (a link to the code&#39;s entry here) and <code>request_id</code>."
	print "Handle a code you do not know by its HTTP status.</p>"
	print "<ul>"
	for (i = 1; i <= n; i++)
		printf "<li><a href=\"#%s\">%s</a></li>\n", codes[i], codes[i]
	print "</ul>"
	for (i = 1; i <= n; i++) {
		printf "<section id=\"%s\">\n", codes[i]
		printf "<h2><a href=\"#%s\">%s</a></h2>\n", codes[i], codes[i]
		printf "<p>%s</p>\n", where(st[i])
		printf "<p>%s</p>\n", html(meaning[i])
		printf "<p>Fix: %s</p>\n", html(fix[i])
		print "</section>"
	}
	print "</main>"
	print "</body>"
	print "</html>"
}

function yq(s) {
	gsub(/\\/, "\\\\", s)
	gsub(/"/, "\\\"", s)
	return "\"" s "\""
}

function emit_yaml(    i) {
	print "# Generated from lib/core/errcodes.txt by lib/core/errcodes.awk: do not edit."
	print "# OpenAPI 3.1 components for the error answers; docs/openapi.yaml refers"
	print "# to them as openapi/errors.yaml#/components/schemas/<name>."
	print "components:"
	print "  schemas:"
	print "    ErrorCode:"
	print "      type: string"
	print "      description: >-"
	print "        What went wrong, one code per condition (the docs page /errors#CODE"
	print "        has each code's meaning and fix). New codes may be added within v1:"
	print "        handle an unknown code by the HTTP status."
	print "      enum:"
	for (i = 1; i <= n; i++)
		printf "        - %s\n", codes[i]
	print "      x-enumDescriptions:"
	for (i = 1; i <= n; i++)
		printf "        %s: %s\n", codes[i], yq(meaning[i])
	print "    FieldError:"
	print "      type: object"
	print "      description: One invalid input, naming it."
	print "      required: [field, code, message]"
	print "      properties:"
	print "        field:"
	print "          type: string"
	print "          description: The field, query parameter or header (\"amount.value\", \"Idempotency-Key\"); empty for the whole body."
	print "        code:"
	print "          type: string"
	print "          description: What is wrong with it, lower case (required, invalid_format, out_of_range, unknown_event_type...)."
	print "        message:"
	print "          type: string"
	print "    Error:"
	print "      type: object"
	print "      description: The coded error envelope of the client API."
	print "      required: [error_code, error_message, hint, docs_url, request_id]"
	print "      properties:"
	print "        error_code:"
	print "          $ref: \"#/components/schemas/ErrorCode\""
	print "        error_message:"
	print "          type: string"
	print "          description: What is wrong, naming the id or the field."
	print "        hint:"
	print "          type: [string, \"null\"]"
	print "          description: What to do about it."
	print "        docs_url:"
	print "          type: string"
	print "          format: uri"
	print "          description: The code's entry on the error page, <docs_url>/errors#<error_code>;"
	print "            by default the page the api host serves, https://<api host>/docs/errors#<error_code>."
	print "        request_id:"
	print "          type: [string, \"null\"]"
	print "          description: The X-Request-Id of the request; quote it in a report."
	print "        errors:"
	print "          type: array"
	print "          description: Present when the error names fields (VALIDATION_ERROR and others)."
	print "          items:"
	print "            $ref: \"#/components/schemas/FieldError\""
	print "    IamError:"
	print "      type: object"
	print "      description: >-"
	print "        The error envelope of the /v1/iam endpoints: success, message,"
	print "        statusCode and errors, plus the coded envelope's members so readers"
	print "        of either work."
	print "      required: [success, message, statusCode, errors, error_code, error_message, hint, docs_url, request_id]"
	print "      properties:"
	print "        success:"
	print "          type: boolean"
	print "          const: false"
	print "        message:"
	print "          type: string"
	print "          description: The same text as error_message."
	print "        statusCode:"
	print "          type: integer"
	print "          description: The HTTP status."
	print "        errors:"
	print "          type: array"
	print "          description: The invalid fields; empty when none is named."
	print "          items:"
	print "            $ref: \"#/components/schemas/FieldError\""
	print "        error_code:"
	print "          $ref: \"#/components/schemas/ErrorCode\""
	print "        error_message:"
	print "          type: string"
	print "        hint:"
	print "          type: [string, \"null\"]"
	print "        docs_url:"
	print "          type: string"
	print "          format: uri"
	print "        request_id:"
	print "          type: [string, \"null\"]"
}
