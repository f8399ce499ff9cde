#ifndef BDS_LINKS_ENTITY_H
#define BDS_LINKS_ENTITY_H
/*
 * Inside lib/links only: the link entity (DOMAIN.md "Link entity") built
 * by PostgreSQL in the statement that reads the row, so a GET is one round
 * trip. Aliases: l = links, b = billers (joined on l.biller_id).
 */
#include "core/db.h"

#define LINKS_JSON_SQL \
	"json_build_object('id', l.id, 'object', 'link', 'client_id', l.client_id," \
	" 'client_user_id', l.client_user_id," \
	" 'biller', json_build_object('id', b.id, 'name', b.name, 'type', b.type)," \
	" 'biller_id', l.biller_id, 'status', l.status," \
	" 'disconnect_reason', l.disconnect_reason," \
	" 'credential_rejection_reason', l.credential_rejection_reason," \
	" 'scopes', to_json(l.scopes)," \
	" 'accounts', coalesce((SELECT json_agg(json_build_object('id', a.id, 'name', a.name," \
	"   'type', a.type, 'account_number_mask', a.account_number_mask," \
	"   'service_address', a.service_address, 'status', a.status)" \
	"   ORDER BY a.created_at, a.id) FROM link_accounts a" \
	"   WHERE a.client_id = l.client_id AND a.link_id = l.id), '[]'::json)," \
	" 'sync', json_build_object('status', l.sync_status," \
	"   'last_attempt_at', " DB_ISO("l.last_attempt_at") "," \
	"   'last_success_at', " DB_ISO("l.last_success_at") "," \
	"   'next_at', " DB_ISO("l.next_sync_at") "," \
	"   'first_sync_completed_at', " DB_ISO("l.first_sync_completed_at") "," \
	"   'bill_count', l.bill_count)," \
	" 'consent_expires_at', " DB_ISO("l.consent_expires_at") "," \
	" 'created_at', " DB_ISO("l.created_at") "," \
	" 'updated_at', " DB_ISO("l.updated_at") ")::text"

#endif
