/** Where system programs (bwrap, unshare) are looked for: the usual PATH of a Debian or Ubuntu root, never a relative entry. */
export const DEFAULT_SEARCH_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
