// The names of the master-key sources (docs/custody.md §1), apart from their code so that the
// configuration can name them without loading a token library.
export const MASTER_KEY_SOURCE_NAMES = ["env", "file", "pkcs11"] as const;
export type MasterKeySourceName = (typeof MASTER_KEY_SOURCE_NAMES)[number];
