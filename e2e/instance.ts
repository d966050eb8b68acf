// The Millrace instance the browser tests run against: started by global-setup.ts on its own
// embedded PostgreSQL and port, never on a developer's data.
// MILLRACE_E2E_PORT and MILLRACE_E2E_PG_PORT keep two runs on one machine apart.
export const E2E_PORT = Number(process.env.MILLRACE_E2E_PORT ?? 8130);
export const E2E_PG_PORT = Number(process.env.MILLRACE_E2E_PG_PORT ?? 5490);
export const E2E_BASE_URL = `http://127.0.0.1:${E2E_PORT}`;
export const E2E_ADMIN = { email: "e2e-admin@example.com", password: "e2e-password-123" };
export const E2E_SUPERADMIN_SECRET = "e2e-superadmin-secret-0123456789";
