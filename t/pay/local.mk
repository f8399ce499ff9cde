# Unit suites of lib/pay/ (one Check program each; sources by name).
# card numbers (Luhn, issuer ranges, expiry) and the card key ring
UNIT_SUITES += %reldir%/check_card
