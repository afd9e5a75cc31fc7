-- Google sign-in (OpenID Connect, when GOOGLE_CLIENT_ID is set): the Google account (its stable
-- `sub`) linked to a kakeibo account, at most one each way. A linked account has an email (the
-- verified one Google gave) and may have no password.
ALTER TABLE users ADD COLUMN google_sub text;
CREATE UNIQUE INDEX users_google_sub_key ON users (google_sub) WHERE google_sub IS NOT NULL;
ALTER TABLE users ADD CONSTRAINT users_google_needs_email CHECK (google_sub IS NULL OR email IS NOT NULL);
