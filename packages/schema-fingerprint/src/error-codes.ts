// Generated from fixtures/schema-fingerprint/error-codes.json by tooling/scripts/gen-protocol.mjs: do not edit.

/** Every {@link CanonicalJsonError.code}, in a stable order; the Python worker reads the same list. */
export const CANONICAL_JSON_ERROR_CODES = ["non_finite_number","unsafe_integer","lone_surrogate","non_string_key","unsupported_type","circular_reference"] as const;
