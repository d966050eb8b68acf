/** A worker is live when it pinged within this many seconds (the Workers page's default window). */
export const DEFAULT_PING_SINCE_SECS = 60;
