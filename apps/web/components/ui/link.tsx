import NextLink from "next/link";
import type { ComponentProps } from "react";

/**
 * next/link without prefetching unless asked for. Every page here is rendered per request and
 * reads its data over tRPC, so prefetching the links in view costs the server one or two renders
 * per link (a list page shows dozens) while the page is still loading its own data, and gains
 * little: a click answers in one round trip.
 */
export default function Link({ prefetch = false, ...props }: ComponentProps<typeof NextLink>) {
  return <NextLink prefetch={prefetch} {...props} />;
}
