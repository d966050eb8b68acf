import type { AuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { sessionSigningSecret, signIn } from "@millrace/core";
import { serverEnv } from "../env.ts";
import { getServices } from "../services.ts";
import { lastHop } from "./ip.ts";

// JWT sessions signed with a key derived from MILLRACE_SECRET_KEY and a random value kept in the
// database: any server sharing both verifies any session, with no sticky sessions, and a database
// dump alone cannot sign one.
let cached: Promise<AuthOptions> | undefined;

async function buildAuthOptions(): Promise<AuthOptions> {
  const services = await getServices();
  const secret = await sessionSigningSecret(services, serverEnv().MILLRACE_SECRET_KEY);
  return {
    secret,
    session: { strategy: "jwt", maxAge: 7 * 24 * 3600 },
    pages: { signIn: "/login" },
    providers: [
      CredentialsProvider({
        name: "Email",
        credentials: {
          email: { label: "Email", type: "email" },
          password: { label: "Password", type: "password" },
        },
        async authorize(credentials, request) {
          if (!credentials?.email || !credentials.password) return null;
          try {
            // Same rate limits and audit rows as POST /api/auth/login.
            const ip = lastHop(request?.headers?.["x-forwarded-for"] as string | undefined);
            const user = await signIn(services, {
              email: credentials.email,
              password: credentials.password,
              ip,
            });
            return { id: user.id, email: user.email, name: user.name ?? user.username };
          } catch {
            return null;
          }
        },
      }),
    ],
    callbacks: {
      jwt({ token, user }) {
        if (user) token.sub = user.id;
        return token;
      },
      session({ session, token }) {
        return { ...session, userId: token.sub };
      },
    },
  };
}

export function getAuthOptions(): Promise<AuthOptions> {
  cached ??= buildAuthOptions().catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}
