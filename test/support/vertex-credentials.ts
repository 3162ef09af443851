/**
 * Google credentials for the Vertex tests that reach no Google endpoint: an auth client holding a
 * static token (unit tests inject it), and an `external_account` credentials file — the kind
 * Workload Identity Federation writes in CI — whose STS `token_url` is a local fake (the CLI's
 * e2e tests name it in GOOGLE_APPLICATION_CREDENTIALS, so the real auth library exchanges the
 * subject token there).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { OAuth2Client } from "google-auth-library";

/** An auth client that holds `token` until an hour from now: it never asks a token endpoint. */
export function staticTokenClient(token: string): OAuth2Client {
  const client = new OAuth2Client();
  client.setCredentials({ access_token: token, token_type: "Bearer", expiry_date: Date.now() + 3_600_000 });
  return client;
}

/**
 * Writes an `external_account` credentials file into `dir`, as google-github-actions/auth writes
 * one: the subject token in a file beside it, exchanged at `tokenUrl`. Returns the file's path.
 */
export function writeExternalAccountFile(dir: string, tokenUrl: string, subjectToken: string): { file: string } {
  const tokenFile = join(dir, "oidc-token");
  writeFileSync(tokenFile, subjectToken);
  const file = join(dir, "external-account.json");
  writeFileSync(file, JSON.stringify({
    type: "external_account",
    audience: "//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/ci/providers/github",
    subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
    token_url: tokenUrl,
    credential_source: { file: tokenFile },
  }));
  return { file };
}
