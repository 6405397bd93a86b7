// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * ccsim_delayline: the propagation delay of the testbed's links, for kernels without sch_netem.
 *
 *   ccsim_delayline -a IF_A -b IF_B -d DELAY_AB_NS -D DELAY_BA_NS [-l LOSS_AB] [-s SEED] [-R RTPRIO]
 *                   [-i TICK_NS] [-f PORT:EXTRA_NS ...]
 *
 * A layer-2 relay between two interfaces of the middle namespace: every frame received on A is sent
 * out of B DELAY_AB_NS later, and B to A after DELAY_BA_NS. Frames are sent with send() on a packet
 * socket, so they pass the egress qdisc of the outgoing interface: the testbed's bottleneck (tbf with
 * a drop-tail child) sits there and sees the relay as a router's forwarding path. A full bottleneck
 * queue refuses the frame (ENOBUFS), counted as a queue drop.
 *
 * LOSS_AB drops each A-to-B frame on arrival with that probability (Bernoulli, xorshift64* seeded
 * with SEED), before it reaches the bottleneck queue.
 *
 * -f PORT:EXTRA_NS (repeatable) adds EXTRA_NS in both directions to the frames of one TCP flow: A-to-B
 * frames whose TCP source port is PORT and B-to-A frames whose TCP destination port is PORT (the
 * sender's end of the flow sits behind A). These are the dumbbell's per-flow access delays: a flow's
 * data crosses its access link on the way out and its ACKs on the way back.
 *
 * Within a direction every frame of one delay class (the frames of flows with the same extra delay,
 * and everything else in class 0) waits the same time, so each class is a FIFO ring and a flow's
 * frames leave in order; the loop sends whatever is due from each class.
 * The loop sleeps in ppoll() until the next frame is due (1 ns timer slack), and may run SCHED_FIFO.
 * Interfaces must have segmentation and checksum offloads off (the testbed does this): a frame
 * larger than a slot would not fit, and a partial checksum would reach the receiver unfinished.
 *
 * With -i it prints its A-to-B counters every TICK_NS (CLOCK_MONOTONIC), for per-interval tables:
 *   tick T_NS rx=N tx=N lost=N queue_drops=N
 * Exits on SIGTERM/SIGINT or when its parent dies, printing one line per direction:
 *   dir=ab rx=N tx=N lost=N ring_full=N queue_drops=N errors=N late_mean_ns=N late_max_ns=N
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FRAME_MAX 2048
#define RING_SLOTS 32768 /* 64 MiB per direction: 1 s of 250 Mbit/s at full frames */
#define MAX_CLASSES 16   /* distinct extra delays (RING_SLOTS are shared out among them) */

struct slot {
	uint64_t due_ns;
	uint16_t len;
	uint8_t data[FRAME_MAX];
};

/* lateness histogram for the p99: 10 us buckets up to 100 ms */
#define LATE_BUCKET_NS 10000ULL
#define LATE_BUCKETS 10001

struct ring {
	struct slot *slots;
	uint64_t size, head, tail; /* frames [head, tail) wait, in arrival (= due) order */
	uint64_t delay_ns;         /* the direction's delay plus the class's extra delay */
};

struct direction {
	const char *tag;
	int rx_fd, tx_fd;
	uint64_t delay_ns;
	uint64_t loss_threshold; /* drop when a 64-bit draw is below it */
	int port_offset;         /* where the flow's port is in the TCP header: 0 source (A to B), 2 destination */
	struct ring rings[MAX_CLASSES];
	uint64_t rx, tx, lost, ring_full, queue_drops, errors, late_sum_ns, late_max_ns;
	uint64_t late_hist[LATE_BUCKETS]; /* frames by lateness, LATE_BUCKET_NS wide; the last: beyond */
};

/* per-flow delay classes: the class of each TCP port (0: no extra delay) */
static uint8_t port_class[65536];
static int any_flow;
static uint64_t class_extra_ns[MAX_CLASSES];
static int n_classes = 1;

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { (void)sig; stop_requested = 1; }

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t next_random(void) /* xorshift64* (Vigna 2016) */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static uint64_t parse_u64(const char *s, const char *what);

static uint64_t clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int open_port(const char *ifname)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	int one = 1, bufsize = 32 << 20;
	unsigned int index = if_nametoindex(ifname);
	struct sockaddr_ll addr = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct packet_mreq promisc = { .mr_type = PACKET_MR_PROMISC };
	char drain[FRAME_MAX];

	if (fd < 0 || index == 0) {
		fprintf(stderr, "ccsim_delayline: %s: %s\n", ifname, fd < 0 ? strerror(errno) : "no such interface");
		exit(1);
	}
	/* our own transmissions on this interface are not input */
	if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0) {
		perror("ccsim_delayline: PACKET_IGNORE_OUTGOING");
		exit(1);
	}
	/* frames waiting in the bottleneck queue are charged to this socket's send buffer */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bufsize, sizeof(bufsize));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bufsize, sizeof(bufsize));
	addr.sll_ifindex = (int)index;
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		perror("ccsim_delayline: bind");
		exit(1);
	}
	promisc.mr_ifindex = (int)index;
	setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &promisc, sizeof(promisc));
	while (recv(fd, drain, sizeof(drain), 0) > 0) /* frames that arrived before bind */
		;
	return fd;
}

/* The delay class of a frame: that of its flow (by the TCP port at d->port_offset), else 0. */
static int frame_class(const struct direction *d, const uint8_t *f, ssize_t len)
{
	size_t ihl;
	uint16_t port;

	if (!any_flow || len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00 || f[14 + 9] != 6 /* IPv4, TCP */)
		return 0;
	ihl = (size_t)(f[14] & 0x0f) * 4;
	if (len < (ssize_t)(14 + ihl + 4))
		return 0;
	port = (uint16_t)(f[14 + ihl + d->port_offset] << 8 | f[14 + ihl + d->port_offset + 1]);
	return port_class[port];
}

static void receive(struct direction *d)
{
	static uint8_t frame[FRAME_MAX];

	for (;;) {
		ssize_t n = recv(d->rx_fd, frame, FRAME_MAX, MSG_TRUNC);
		struct ring *r;
		struct slot *s;

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				d->errors++;
			return;
		}
		d->rx++;
		if (n > FRAME_MAX) { /* an offloaded super-frame: the testbed turns offloads off */
			d->errors++;
			continue;
		}
		if (d->loss_threshold && next_random() < d->loss_threshold) {
			d->lost++;
			continue;
		}
		r = &d->rings[frame_class(d, frame, n)];
		if (r->tail - r->head >= r->size) {
			d->ring_full++;
			continue;
		}
		s = &r->slots[r->tail % r->size];
		memcpy(s->data, frame, (size_t)n);
		s->len = (uint16_t)n;
		s->due_ns = clock_ns() + r->delay_ns;
		r->tail++;
	}
}

/* Sends every frame of ring r that is due; returns the due time of its next one (0: ring empty). */
static uint64_t transmit_ring(struct direction *d, struct ring *r, uint64_t now)
{
	while (r->head < r->tail) {
		struct slot *s = &r->slots[r->head % r->size];
		ssize_t n;
		uint64_t late;

		if (s->due_ns > now)
			return s->due_ns;
		n = send(d->tx_fd, s->data, s->len, 0);
		if (n < 0 && errno == EAGAIN)
			return now + 20000; /* send buffer full: retry in 20 us */
		late = now - s->due_ns;
		d->late_sum_ns += late;
		if (late > d->late_max_ns)
			d->late_max_ns = late;
		d->late_hist[late / LATE_BUCKET_NS < LATE_BUCKETS - 1 ? late / LATE_BUCKET_NS : LATE_BUCKETS - 1]++;
		if (n >= 0)
			d->tx++;
		else if (errno == ENOBUFS)
			d->queue_drops++;
		else
			d->errors++;
		r->head++;
	}
	return 0;
}

/* Sends every frame of the direction that is due; returns the earliest next due time (0: none). */
static uint64_t transmit(struct direction *d, uint64_t now)
{
	uint64_t next = 0;

	for (int c = 0; c < n_classes; c++) {
		uint64_t due = transmit_ring(d, &d->rings[c], now);
		if (due && (!next || due < next))
			next = due;
	}
	return next;
}

/* -f PORT:EXTRA_NS: the flow's port joins the class of that extra delay (a new class if none has it). */
static void add_flow(const char *arg)
{
	char *colon = strchr(arg, ':'), port_text[16];
	uint64_t port, extra;
	int c;

	if (!colon || colon == arg || (size_t)(colon - arg) >= sizeof(port_text)) {
		fprintf(stderr, "ccsim_delayline: -f %s: expected PORT:EXTRA_NS\n", arg);
		exit(2);
	}
	memcpy(port_text, arg, (size_t)(colon - arg));
	port_text[colon - arg] = 0;
	port = parse_u64(port_text, "-f port");
	extra = parse_u64(colon + 1, "-f extra delay");
	if (port == 0 || port > 65535) {
		fprintf(stderr, "ccsim_delayline: -f %s: port out of range\n", arg);
		exit(2);
	}
	for (c = 1; c < n_classes && class_extra_ns[c] != extra; c++)
		;
	if (c == n_classes) {
		if (n_classes == MAX_CLASSES) {
			fprintf(stderr, "ccsim_delayline: more than %d distinct extra delays\n", MAX_CLASSES - 1);
			exit(2);
		}
		class_extra_ns[n_classes++] = extra;
	}
	port_class[port] = (uint8_t)c;
	any_flow = 1;
}

/* The 99th percentile of lateness: the upper edge of the bucket holding it (10 us resolution; the
 * maximum if it lies beyond the histogram). */
static uint64_t late_p99_ns(const struct direction *d)
{
	uint64_t total = 0, seen = 0;

	for (int i = 0; i < LATE_BUCKETS; i++)
		total += d->late_hist[i];
	if (!total)
		return 0;
	for (int i = 0; i < LATE_BUCKETS - 1; i++) {
		seen += d->late_hist[i];
		if (seen * 100 >= total * 99)
			return (uint64_t)(i + 1) * LATE_BUCKET_NS < d->late_max_ns ? (uint64_t)(i + 1) * LATE_BUCKET_NS : d->late_max_ns;
	}
	return d->late_max_ns;
}

static void report(const struct direction *d)
{
	uint64_t sent = d->tx + d->queue_drops;
	printf("dir=%s rx=%llu tx=%llu lost=%llu ring_full=%llu queue_drops=%llu errors=%llu late_mean_ns=%llu late_max_ns=%llu late_p99_ns=%llu\n",
	       d->tag, (unsigned long long)d->rx, (unsigned long long)d->tx, (unsigned long long)d->lost,
	       (unsigned long long)d->ring_full, (unsigned long long)d->queue_drops, (unsigned long long)d->errors,
	       (unsigned long long)(sent ? d->late_sum_ns / sent : 0), (unsigned long long)d->late_max_ns,
	       (unsigned long long)late_p99_ns(d));
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || end == s) {
		fprintf(stderr, "ccsim_delayline: %s: %s is not an unsigned integer\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *if_a = NULL, *if_b = NULL;
	struct direction d[2] = { { .tag = "ab" }, { .tag = "ba" } };
	double loss = 0;
	int rtprio = 0, opt;
	uint64_t tick_ns = 0, next_tick = 0;

	while ((opt = getopt(argc, argv, "a:b:d:D:l:s:R:i:f:")) != -1) {
		switch (opt) {
		case 'a': if_a = optarg; break;
		case 'b': if_b = optarg; break;
		case 'd': d[0].delay_ns = parse_u64(optarg, "-d"); break;
		case 'D': d[1].delay_ns = parse_u64(optarg, "-D"); break;
		case 'l': loss = atof(optarg); break;
		case 's': rng_state = parse_u64(optarg, "-s") * 0x9e3779b97f4a7c15ULL | 1; break;
		case 'R': rtprio = (int)parse_u64(optarg, "-R"); break;
		case 'i': tick_ns = parse_u64(optarg, "-i"); break;
		case 'f': add_flow(optarg); break;
		default:
			fprintf(stderr, "usage: ccsim_delayline -a IF_A -b IF_B -d NS -D NS [-l LOSS] [-s SEED] [-R RTPRIO] [-i TICK_NS] [-f PORT:EXTRA_NS ...]\n");
			return 2;
		}
	}
	if (!if_a || !if_b || loss < 0 || loss >= 1) {
		fprintf(stderr, "ccsim_delayline: need -a and -b, and 0 <= loss < 1\n");
		return 2;
	}
	d[0].loss_threshold = (uint64_t)(loss * 18446744073709551616.0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	prctl(PR_SET_TIMERSLACK, 1UL);
	if (rtprio > 0) {
		struct sched_param sp = { .sched_priority = rtprio };
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			perror("ccsim_delayline: SCHED_FIFO (continuing at normal priority)");
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	d[0].rx_fd = d[1].tx_fd = open_port(if_a);
	d[1].rx_fd = d[0].tx_fd = open_port(if_b);
	d[0].port_offset = 0; /* A to B: data, the flow's port is the source */
	d[1].port_offset = 2; /* B to A: ACKs, the flow's port is the destination */
	for (int i = 0; i < 2; i++) {
		for (int c = 0; c < n_classes; c++) {
			struct ring *r = &d[i].rings[c];
			r->size = RING_SLOTS / (uint64_t)n_classes;
			r->delay_ns = d[i].delay_ns + class_extra_ns[c];
			r->slots = malloc(sizeof(struct slot) * r->size);
			if (!r->slots) {
				fprintf(stderr, "ccsim_delayline: out of memory\n");
				return 1;
			}
		}
	}
	printf("ready\n");
	fflush(stdout);
	if (tick_ns)
		next_tick = clock_ns() + tick_ns;

	while (!stop_requested) {
		struct pollfd fds[2] = { { .fd = d[0].rx_fd, .events = POLLIN }, { .fd = d[1].rx_fd, .events = POLLIN } };
		uint64_t now = clock_ns(), next = 0;
		struct timespec wait, *timeout = NULL;

		for (int i = 0; i < 2; i++) {
			uint64_t due = transmit(&d[i], now);
			if (due && (!next || due < next))
				next = due;
		}
		if (tick_ns) {
			if (now >= next_tick) {
				printf("tick %llu rx=%llu tx=%llu lost=%llu queue_drops=%llu\n", (unsigned long long)now,
				       (unsigned long long)d[0].rx, (unsigned long long)d[0].tx, (unsigned long long)d[0].lost,
				       (unsigned long long)d[0].queue_drops);
				fflush(stdout);
				next_tick += tick_ns * (1 + (now - next_tick) / tick_ns);
			}
			if (!next || next_tick < next)
				next = next_tick;
		}
		if (next) {
			uint64_t t = clock_ns(), w = next > t ? next - t : 0;
			wait.tv_sec = (time_t)(w / 1000000000ULL);
			wait.tv_nsec = (long)(w % 1000000000ULL);
			timeout = &wait;
		}
		if (ppoll(fds, 2, timeout, NULL) > 0) {
			if (fds[0].revents & POLLIN)
				receive(&d[0]);
			if (fds[1].revents & POLLIN)
				receive(&d[1]);
		}
	}
	report(&d[0]);
	report(&d[1]);
	fflush(stdout);
	return 0;
}
