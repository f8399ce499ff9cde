#ifndef BDS_LINKS_ENTITY_H
#define BDS_LINKS_ENTITY_H
/*
 * Inside lib/links only: the link entity (DOMAIN.md "Link entity") as
 * stored beside the row (links.entity, sql/026_links_entity.sql): built
 * once per write by links_json(l), the one definition, and kept current by
 * triggers on links, link_accounts and billers. A read sends it as is, so
 * a GET is one indexed select without joins. Alias: l = links.
 */
#define LINKS_JSON_SQL "l.entity"

#endif
