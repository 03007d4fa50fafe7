// name: media_get_many
// returns: one row {sha256, media_type, data} per hash stored for the tenant
// purpose: the data of the images and documents a render's blocks name by hash, for its provider request
// params: hashes, tenant
UNWIND $hashes AS digest
MATCH (m:Media {tenant: $tenant, sha256: digest})
RETURN m.sha256 AS sha256, m.media_type AS media_type, m.data AS data
