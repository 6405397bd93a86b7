// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * ccsim_delayline: the propagation delay of the testbed's links, for kernels without sch_netem.
 *
 *   ccsim_delayline -a IF_A -b IF_B -d DELAY_AB_NS -D DELAY_BA_NS [-l LOSS_AB] [-s SEED] [-R RTPRIO]
 *                   [-i TICK_NS]
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
 * The delay is constant per direction, so each direction is a FIFO ring and frames leave in order.
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

struct slot {
	uint64_t due_ns;
	uint16_t len;
	uint8_t data[FRAME_MAX];
};

struct direction {
	const char *tag;
	int rx_fd, tx_fd;
	uint64_t delay_ns;
	uint64_t loss_threshold; /* drop when a 64-bit draw is below it */
	struct slot *ring;
	uint64_t head, tail;      /* frames [head, tail) wait in the ring */
	uint64_t rx, tx, lost, ring_full, queue_drops, errors, late_sum_ns, late_max_ns;
};

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

static void receive(struct direction *d)
{
	for (;;) {
		struct slot *s = &d->ring[d->tail % RING_SLOTS];
		ssize_t n = recv(d->rx_fd, s->data, FRAME_MAX, MSG_TRUNC);

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
		if (d->tail - d->head >= RING_SLOTS) {
			d->ring_full++;
			continue;
		}
		s->len = (uint16_t)n;
		s->due_ns = clock_ns() + d->delay_ns;
		d->tail++;
	}
}

/* Sends every frame that is due; returns the due time of the next one (0: ring empty). */
static uint64_t transmit(struct direction *d, uint64_t now)
{
	while (d->head < d->tail) {
		struct slot *s = &d->ring[d->head % RING_SLOTS];
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
		if (n >= 0)
			d->tx++;
		else if (errno == ENOBUFS)
			d->queue_drops++;
		else
			d->errors++;
		d->head++;
	}
	return 0;
}

static void report(const struct direction *d)
{
	uint64_t sent = d->tx + d->queue_drops;
	printf("dir=%s rx=%llu tx=%llu lost=%llu ring_full=%llu queue_drops=%llu errors=%llu late_mean_ns=%llu late_max_ns=%llu\n",
	       d->tag, (unsigned long long)d->rx, (unsigned long long)d->tx, (unsigned long long)d->lost,
	       (unsigned long long)d->ring_full, (unsigned long long)d->queue_drops, (unsigned long long)d->errors,
	       (unsigned long long)(sent ? d->late_sum_ns / sent : 0), (unsigned long long)d->late_max_ns);
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

	while ((opt = getopt(argc, argv, "a:b:d:D:l:s:R:i:")) != -1) {
		switch (opt) {
		case 'a': if_a = optarg; break;
		case 'b': if_b = optarg; break;
		case 'd': d[0].delay_ns = parse_u64(optarg, "-d"); break;
		case 'D': d[1].delay_ns = parse_u64(optarg, "-D"); break;
		case 'l': loss = atof(optarg); break;
		case 's': rng_state = parse_u64(optarg, "-s") * 0x9e3779b97f4a7c15ULL | 1; break;
		case 'R': rtprio = (int)parse_u64(optarg, "-R"); break;
		case 'i': tick_ns = parse_u64(optarg, "-i"); break;
		default:
			fprintf(stderr, "usage: ccsim_delayline -a IF_A -b IF_B -d NS -D NS [-l LOSS] [-s SEED] [-R RTPRIO] [-i TICK_NS]\n");
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
	for (int i = 0; i < 2; i++) {
		d[i].ring = malloc(sizeof(struct slot) * RING_SLOTS);
		if (!d[i].ring) {
			fprintf(stderr, "ccsim_delayline: out of memory\n");
			return 1;
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
