import type { AuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { getInstanceSecret, signIn } from "@millrace/core";
import { getServices } from "../services.ts";
import { lastHop } from "./ip.ts";

// JWT sessions signed with a secret kept in the database: any server sharing the database
// verifies any session, with no sticky sessions and no extra configuration.
let cached: Promise<AuthOptions> | undefined;

async function buildAuthOptions(): Promise<AuthOptions> {
  const services = await getServices();
  const secret = await getInstanceSecret(services, "session_secret");
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
