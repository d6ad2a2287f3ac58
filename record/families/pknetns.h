/* Running a piece of setup inside the recorded network namespace (TC attach,
 * interface lookup, sockets) and coming back. Used by the pktpath, stackmon
 * and clocksync families. */
#ifndef NP_REC_PKNETNS_H
#define NP_REC_PKNETNS_H

/* Enters netns_fd (no-op when < 0). *saved receives the fd of the current
 * netns to give to pk_netns_leave. 0 or -errno. */
int pk_netns_enter(int netns_fd, int *saved);
/* Returns to the saved netns and closes saved. 0 or -errno. */
int pk_netns_leave(int saved);
/* ifindex of IFACE inside netns_fd, 0 if there is no such interface. */
unsigned pk_netns_ifindex(int netns_fd, const char *iface);

#endif
