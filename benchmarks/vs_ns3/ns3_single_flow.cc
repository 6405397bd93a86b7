// ns3_single_flow.cc -- the ccsim "single flow" scenario in ns-3, for a side-by-side comparison.
//
// Topology (a dumbbell; one sender/receiver pair per flow):
//
//   sender_i --access--> R1 ==bottleneck==> R2 --access--> receiver_i
//
//   * bottleneck R1 -> R2: --rate (10 Mbit/s), --delay (20 ms one way), drop-tail device queue of
//     --queue packets (84). The reverse direction R2 -> R1 (ACKs) has the same rate and delay and a
//     10000-packet queue, i.e. it is never congested (as ccsim's "reverse" link).
//   * access links: --access-rate (1 Gbit/s), --access-delay (0), effectively unlimited queues, so
//     that the bottleneck is the only place where packets wait or are dropped.
//   * no traffic-control queue disc anywhere (see Uninstall below): the drop-tail limit is the
//     PointToPoint device's own TxQueue, exactly one FIFO per direction, as in ccsim.
//   * optional random loss (--loss p), data direction only (ACKs are never lost), as a packet-level
//     RateErrorModel either where packets reach R1 from the access links, i.e. just before the
//     bottleneck queue (--loss-at=entry, the default: ccsim drops at the bottleneck's entry, so a
//     lost packet neither queues nor uses the link), or on R2's bottleneck device, after the packet
//     has crossed the bottleneck (--loss-at=exit).
//
// TCP: NewReno congestion avoidance, classic (RFC 6582-style) recovery, SACK on, timestamps off
// (so MSS = 1460 with 1500-byte IP packets), initial window 3, delayed ACKs every 2nd segment with
// a 100 ms timer, min RTO 200 ms, large buffers so that the receive window never limits.
//
// Output: one JSON line on stdout (see PrintJson). Usage:
//   ns3_single_flow [--loss=0.01] [--duration=60] [--seed=1] [--flows=1] [--rate=10Mbps]
//                   [--delay=20ms] [--queue=84] [--access-rate=1Gbps] [--access-delay=0ms]
//                   [--buffer=16777216] [--start-spread=0] [--loss-at=entry|exit]
//                   [--ss-boundary=lt|le] [--ssthresh-from=pipe|flight]
//                   [--recovery-exit=ssthresh|flight]
// The last three are diagnostics that give ns-3's NewReno one of ccsim's rules (see below); the
// defaults are ns-3's own behaviour.
// Both "--key=value" and "--key value" are accepted.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#ifndef CCSIM_NS3_VERSION
#define CCSIM_NS3_VERSION "unknown" // build.sh passes the version found in the library names
#endif

using namespace ns3;

namespace
{

// ---------------------------------------------------------------------------------------------
// Command line. ns-3's CommandLine only takes "--key=value"; the benchmark instructions use
// "--key value" too, so parse both here.
// ---------------------------------------------------------------------------------------------
struct Options
{
    double loss = 0.0;           // random packet loss probability on the bottleneck (data only)
    double duration = 60.0;      // simulated seconds; goodput is measured over [0, duration]
    uint32_t seed = 1;           // ns-3 run number (RngSeedManager::SetRun)
    uint32_t flows = 1;          // number of NewReno flows
    std::string rate = "10Mbps"; // bottleneck rate
    std::string delay = "20ms";  // bottleneck one-way propagation delay
    uint32_t queue = 84;         // bottleneck drop-tail limit, packets
    std::string accessRate = "1Gbps";
    std::string accessDelay = "0ms";
    uint32_t buffer = 16 * 1024 * 1024; // TCP send/receive buffer, bytes
    double startSpread = 0.0;           // flow i starts at i * startSpread / flows seconds
    bool lossAtEntry = true;            // random loss before the bottleneck queue (else after it)
    bool ssInclusive = false;           // diagnostic: slow start while cwnd <= ssthresh (ccsim)
    bool exitToFlight = false;          // diagnostic: leave recovery with min(ssthresh, flight+MSS)
    bool ssthreshFromFlight = false;    // diagnostic: ssthresh = FlightSize / 2 at a fast retransmit
    bool ns3Defaults = false;           // --tcp=defaults: ns-3's own TCP attributes (NewReno aside)
    uint32_t delAckCount = 2;           // --delack-count N: TcpSocket DelAckCount (1: an ACK per segment)
};

[[noreturn]] void
Usage(const std::string& msg)
{
    std::cerr << "ns3_single_flow: " << msg << "\n"
              << "options: --loss P --duration S --seed N --flows N --rate R --delay D "
                 "--queue PKTS --access-rate R --access-delay D --buffer BYTES --start-spread S "
                 "--loss-at entry|exit --ss-boundary lt|le --ssthresh-from pipe|flight "
                 "--recovery-exit ssthresh|flight\n";
    std::exit(2);
}

Options
ParseArgs(int argc, char** argv)
{
    std::map<std::string, std::string> kv;
    for (int i = 1; i < argc; ++i)
    {
        std::string a = argv[i];
        if (a == "-h" || a == "--help")
        {
            Usage("help");
        }
        if (a.rfind("--", 0) != 0)
        {
            Usage("unexpected argument '" + a + "'");
        }
        a = a.substr(2);
        auto eq = a.find('=');
        if (eq != std::string::npos)
        {
            kv[a.substr(0, eq)] = a.substr(eq + 1);
        }
        else if (i + 1 < argc)
        {
            kv[a] = argv[++i];
        }
        else
        {
            Usage("missing value for --" + a);
        }
    }
    Options o;
    for (const auto& [k, v] : kv)
    {
        try
        {
            if (k == "loss")
                o.loss = std::stod(v);
            else if (k == "duration")
                o.duration = std::stod(v);
            else if (k == "seed")
                o.seed = static_cast<uint32_t>(std::stoul(v));
            else if (k == "flows")
                o.flows = static_cast<uint32_t>(std::stoul(v));
            else if (k == "rate")
                o.rate = v;
            else if (k == "delay")
                o.delay = v;
            else if (k == "queue")
                o.queue = static_cast<uint32_t>(std::stoul(v));
            else if (k == "access-rate" || k == "accessRate")
                o.accessRate = v;
            else if (k == "access-delay" || k == "accessDelay")
                o.accessDelay = v;
            else if (k == "buffer")
                o.buffer = static_cast<uint32_t>(std::stoul(v));
            else if (k == "start-spread" || k == "startSpread")
                o.startSpread = std::stod(v);
            else if (k == "loss-at" || k == "lossAt")
            {
                if (v != "entry" && v != "exit")
                    throw std::invalid_argument(v);
                o.lossAtEntry = (v == "entry");
            }
            else if (k == "ss-boundary")
            {
                if (v != "lt" && v != "le")
                    throw std::invalid_argument(v);
                o.ssInclusive = (v == "le");
            }
            else if (k == "ssthresh-from")
            {
                if (v != "pipe" && v != "flight")
                    throw std::invalid_argument(v);
                o.ssthreshFromFlight = (v == "flight");
            }
            else if (k == "tcp")
            {
                if (v != "scenario" && v != "defaults")
                    throw std::invalid_argument(v);
                o.ns3Defaults = (v == "defaults");
            }
            else if (k == "delack-count")
                o.delAckCount = static_cast<uint32_t>(std::stoul(v));
            else if (k == "recovery-exit")
            {
                if (v != "ssthresh" && v != "flight")
                    throw std::invalid_argument(v);
                o.exitToFlight = (v == "flight");
            }
            else
                Usage("unknown option --" + k);
        }
        catch (const std::exception&)
        {
            Usage("bad value '" + v + "' for --" + k);
        }
    }
    if (o.loss < 0.0 || o.loss >= 1.0 || o.duration <= 0.0 || o.flows == 0 || o.queue == 0 ||
        o.seed == 0 || o.delAckCount == 0)
    {
        Usage("out-of-range option (need 0 <= loss < 1, duration > 0, flows/queue/seed >= 1)");
    }
    return o;
}

// ---------------------------------------------------------------------------------------------
// Diagnostics: ns-3's NewReno with one of ccsim's rules, to attribute differences between the two.
// Both rules are allowed by the RFCs; ns-3 and ccsim just pick differently.
// ---------------------------------------------------------------------------------------------

// Which of ccsim's rules the NewReno below follows (set from the command line before any socket
// exists; every flow uses the same).
struct CcsimRules
{
    bool ssInclusive = false;        // --ss-boundary=le
    bool ssthreshFromFlight = false; // --ssthresh-from=flight
};

CcsimRules g_rules;

// ns-3's TcpNewReno with up to two of ccsim's rules.
//
// --ss-boundary=le. ns-3's TcpNewReno is in slow start while cwnd < ssthresh, and after a fast
// recovery (cwnd = ssthresh) goes straight to congestion avoidance. ccsim (crates/ccsim-cc,
// Window::in_slow_start) uses cwnd <= ssthresh, so the first ACK after a recovery adds a whole
// MSS. RFC 5681 3.1 lets a sender do either when cwnd == ssthresh.
//
// --ssthresh-from=flight. At a fast retransmit ns-3 (TcpSocketBase::EnterRecovery) passes
// GetSsThresh the RFC 6675 pipe after marking the head lost: FlightSize less what the receiver
// has SACKed and less the lost head, so ssthresh = pipe / 2 (about FlightSize / 2 - 1 MSS for a
// single loss, lower when several segments of the window are lost). RFC 5681 eq. (4) and RFC 6675
// step (4.2) halve FlightSize, the data outstanding, without the segments that limited transmit
// sent (RFC 5681 3.2 step 2); that is ccsim's `halve_from = "flight"`. With this rule the
// FlightSize is HighData when the first duplicate ACK arrived (before limited transmit sends
// anything) less the cumulative ACK. At a timeout ns-3 passes the pipe before the timeout, which
// both rules keep (ccsim halves the same quantity there: the sequence span outside recovery, the
// pipe inside SACK recovery).
class TcpNewRenoCcsimRules : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ccsim::TcpNewRenoCcsimRules")
                                .SetParent<TcpNewReno>()
                                .AddConstructor<TcpNewRenoCcsimRules>();
        return tid;
    }

    TcpNewRenoCcsimRules() = default;
    TcpNewRenoCcsimRules(const TcpNewRenoCcsimRules& other) = default;

    std::string GetName() const override
    {
        return "TcpNewRenoCcsimRules";
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (!g_rules.ssInclusive)
        {
            TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
            return;
        }
        // As ccsim with abc = 0: at most one MSS per ACK in slow start, nothing carried over.
        if (tcb->m_cWnd <= tcb->m_ssThresh)
            SlowStart(tcb, segmentsAcked);
        else
            CongestionAvoidance(tcb, segmentsAcked);
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        // TcpSocketBase::DupAck moves OPEN -> DISORDER on the first duplicate ACK, before
        // SendPendingData can send a limited-transmit segment; EnterRecovery moves to RECOVERY
        // just before it asks for ssthresh.
        if (newState == TcpSocketState::CA_DISORDER)
            m_highDataAtFirstDupack = tcb->m_highTxMark.Get();
        m_enteringRecovery = (newState == TcpSocketState::CA_RECOVERY);
        TcpNewReno::CongestionStateSet(tcb, newState);
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        const bool fastRetransmit = m_enteringRecovery;
        m_enteringRecovery = false;
        if (g_rules.ssthreshFromFlight && fastRetransmit)
        {
            const uint32_t flightSize = m_highDataAtFirstDupack - tcb->m_lastAckedSeq;
            return TcpNewReno::GetSsThresh(tcb, flightSize);
        }
        return TcpNewReno::GetSsThresh(tcb, bytesInFlight);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpNewRenoCcsimRules>(this);
    }

  private:
    SequenceNumber32 m_highDataAtFirstDupack{0};
    bool m_enteringRecovery = false;
};

// --recovery-exit=flight. ns-3 leaves fast recovery with cwnd = ssthresh; ccsim with
// cwnd = min(ssthresh, FlightSize + MSS) (RFC 6582 3.2 step 3, option 1), which avoids a burst
// when little is in flight. TcpSocketBase sets cwnd = ssthresh just before calling ExitRecovery.
class TcpClassicRecoveryToFlight : public TcpClassicRecovery
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ccsim::TcpClassicRecoveryToFlight")
                                .SetParent<TcpClassicRecovery>()
                                .AddConstructor<TcpClassicRecoveryToFlight>();
        return tid;
    }

    TcpClassicRecoveryToFlight() = default;
    TcpClassicRecoveryToFlight(const TcpClassicRecoveryToFlight& other) = default;

    std::string GetName() const override
    {
        return "TcpClassicRecoveryToFlight";
    }

    void ExitRecovery(Ptr<TcpSocketState> tcb) override
    {
        tcb->m_cWnd =
            std::min(tcb->m_ssThresh.Get(), tcb->m_bytesInFlight.Get() + tcb->m_segmentSize);
        tcb->m_cWndInfl = tcb->m_cWnd.Get();
    }

    Ptr<TcpRecoveryOps> Fork() override
    {
        return CopyObject<TcpClassicRecoveryToFlight>(this);
    }
};

// ---------------------------------------------------------------------------------------------
// Bottleneck measurement: the data direction's device queue at R1, plus the error models' drops.
// ---------------------------------------------------------------------------------------------
struct BottleneckStats
{
    uint64_t enqueued = 0;     // packets accepted into the drop-tail queue
    uint64_t queueDrops = 0;   // packets refused by the full queue (tail drops)
    uint64_t dequeued = 0;     // packets that started transmission on the bottleneck
    uint64_t txBytes = 0;      // bytes serialised on the bottleneck (incl. the 2-byte PPP header)
    uint64_t randomDrops = 0;  // packets discarded by the error model(s)
    std::deque<Time> inQueue;  // enqueue times of the packets now queued (FIFO => pop front)
    double sojournSumS = 0.0;  // sum of waiting times (enqueue -> start of transmission)
    double sojournMaxS = 0.0;
};

BottleneckStats g_bn;

void
OnEnqueue(Ptr<const Packet>)
{
    ++g_bn.enqueued;
    g_bn.inQueue.push_back(Simulator::Now());
}

void
OnDequeue(Ptr<const Packet> p)
{
    // The PointToPoint device dequeues when it starts serialising a packet, so this is the
    // queueing delay proper (waiting time), without the packet's own transmission time. A packet
    // arriving at an idle link is enqueued and dequeued at the same instant: delay 0.
    ++g_bn.dequeued;
    g_bn.txBytes += p->GetSize();
    double s = (Simulator::Now() - g_bn.inQueue.front()).GetSeconds();
    g_bn.inQueue.pop_front();
    g_bn.sojournSumS += s;
    g_bn.sojournMaxS = std::max(g_bn.sojournMaxS, s);
}

void
OnQueueDrop(Ptr<const Packet>)
{
    ++g_bn.queueDrops;
}

void
OnRandomDrop(Ptr<const Packet>)
{
    ++g_bn.randomDrops;
}

// TCP sender events, summed over flows.
uint64_t g_retransmissions = 0;
uint64_t g_fastRecoveries = 0;
uint64_t g_timeouts = 0;

void
OnRetransmission(Ptr<const Packet>,
                 const TcpHeader&,
                 const Address&,
                 const Address&,
                 Ptr<const TcpSocketBase>)
{
    ++g_retransmissions;
}

void
OnCongState(TcpSocketState::TcpCongState_t oldState, TcpSocketState::TcpCongState_t newState)
{
    if (newState == TcpSocketState::CA_RECOVERY && oldState != TcpSocketState::CA_RECOVERY)
        ++g_fastRecoveries;
    if (newState == TcpSocketState::CA_LOSS && oldState != TcpSocketState::CA_LOSS)
        ++g_timeouts;
}

// BulkSendApplication creates its socket in StartApplication, so the TCP traces can only be
// hooked once the application has started.
void
HookSenderTraces(Ptr<BulkSendApplication> app)
{
    Ptr<TcpSocketBase> sock = DynamicCast<TcpSocketBase>(app->GetSocket());
    NS_ABORT_MSG_IF(!sock, "BulkSend socket is not a TcpSocketBase");
    NS_ABORT_MSG_IF(!sock->TraceConnectWithoutContext("Retransmission",
                                                      MakeCallback(&OnRetransmission)),
                    "no Retransmission trace");
    NS_ABORT_MSG_IF(!sock->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState)),
                    "no CongState trace");
}

} // namespace

int
main(int argc, char** argv)
{
    const Options opt = ParseArgs(argc, argv);
    const auto wallStart = std::chrono::steady_clock::now();

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(opt.seed);

    // --- TCP configuration (defaults for every socket created afterwards) ---------------------
    // ns-3's default congestion control is Cubic: ask for NewReno explicitly.
    g_rules.ssInclusive = opt.ssInclusive;
    g_rules.ssthreshFromFlight = opt.ssthreshFromFlight;
    const bool ccsimRules = opt.ssInclusive || opt.ssthreshFromFlight;
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(ccsimRules ? TcpNewRenoCcsimRules::GetTypeId()
                                              : TcpNewReno::GetTypeId()));
    // --tcp=defaults (compare.py --profile ns3): every other TCP attribute keeps ns-3.44's default
    // (SegmentSize 536, InitialCwnd 10, timestamps, DelAckTimeout 200 ms, MinRto 1 s, PRR, 128 KiB
    // buffers), which ccsim's `ns3` profile reproduces; only DelAckCount is chosen.
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(opt.delAckCount));
    if (!opt.ns3Defaults)
    {
        // ns-3's default recovery is PRR (RFC 6937); the scenario uses classic NewReno recovery.
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(opt.exitToFlight ? TcpClassicRecoveryToFlight::GetTypeId()
                                                        : TcpClassicRecovery::GetTypeId()));
        // No timestamps: TCP/IP header = 40 bytes, so MSS 1460 gives 1500-byte IP packets.
        Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
        Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
        Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(3));
        // Delayed ACKs: ACK every 2nd segment, or 100 ms after an unacknowledged one (ns-3's default
        // timeout is 200 ms). Out-of-order segments are ACKed at once.
        Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(100)));
        // ns-3's default MinRto is 1 s (RFC 6298); the scenario uses Linux's 200 ms.
        Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
        // Buffers far above any window this scenario can reach, so neither the sender's buffer nor the
        // receiver's advertised window (window scaling is on by default) ever limits the flow.
        Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(opt.buffer));
        Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(opt.buffer));
        // Stated for clarity (these are the ns-3 defaults): 3 duplicate ACKs, limited transmit on,
        // no pacing, no ECN, Nagle off.
        Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(3));
        Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(true));
        Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(false));
        Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("Off"));
        Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    }

    // Routing performance only: with the default (weak) end-system model, every IPv4 packet a node
    // receives is checked against the addresses of *all* its interfaces, and the two routers have
    // flows + 1 interfaces each (that loop dominated the 100-flow profile). No packet in this
    // scenario is addressed to a router, so the strong model forwards exactly the same packets.
    Config::SetDefault("ns3::Ipv4::StrongEndSystemModel", BooleanValue(true));

    // --- Nodes ------------------------------------------------------------------------------
    NodeContainer senders;
    NodeContainer receivers;
    NodeContainer routers;
    senders.Create(opt.flows);
    receivers.Create(opt.flows);
    routers.Create(2);
    Ptr<Node> r1 = routers.Get(0);
    Ptr<Node> r2 = routers.Get(1);

    InternetStackHelper stack;
    stack.InstallAll();

    // --- Links ------------------------------------------------------------------------------
    // DisableFlowControl: without it, the traffic-control layer stops handing packets to a full
    // device queue and drops them itself, so tail drops would be counted there instead of in the
    // device queue; and Ipv4AddressHelper would install an FqCoDel queue disc (see below). With
    // it, the device's drop-tail queue is the one place where packets wait and drop.
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(opt.accessRate));
    access.SetChannelAttribute("Delay", StringValue(opt.accessDelay));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1000000p"));
    access.DisableFlowControl();

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(opt.rate));
    bottleneck.SetChannelAttribute("Delay", StringValue(opt.delay));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        StringValue(std::to_string(opt.queue) + "p"));
    bottleneck.DisableFlowControl();

    NetDeviceContainer allDevices;
    Ipv4AddressHelper ipv4;
    ipv4.SetBase("10.0.0.0", "255.255.255.0");

    NetDeviceContainer bnDevs = bottleneck.Install(r1, r2);
    ipv4.Assign(bnDevs);
    ipv4.NewNetwork();
    allDevices.Add(bnDevs);
    // The reverse (ACK) direction: same rate and delay, a queue that never fills.
    Ptr<PointToPointNetDevice> bnTx = DynamicCast<PointToPointNetDevice>(bnDevs.Get(0));
    Ptr<PointToPointNetDevice> bnRx = DynamicCast<PointToPointNetDevice>(bnDevs.Get(1));
    bnRx->GetQueue()->SetMaxSize(QueueSize("10000p"));

    std::vector<Ipv4Address> receiverAddr;
    NetDeviceContainer r1AccessDevs; // R1's side of each access link: where data enters R1
    for (uint32_t i = 0; i < opt.flows; ++i)
    {
        NetDeviceContainer left = access.Install(senders.Get(i), r1);
        ipv4.Assign(left);
        ipv4.NewNetwork();
        NetDeviceContainer right = access.Install(r2, receivers.Get(i));
        Ipv4InterfaceContainer rightIf = ipv4.Assign(right);
        ipv4.NewNetwork();
        receiverAddr.push_back(rightIf.GetAddress(1));
        r1AccessDevs.Add(left.Get(1));
        allDevices.Add(left);
        allDevices.Add(right);
    }

    // Ipv4AddressHelper::Assign installs the default root queue disc (FqCoDel) on every device it
    // numbers that has a NetDeviceQueueInterface. DisableFlowControl above removes that interface,
    // so none should be there; remove any that is anyway (Uninstall asserts on a device without
    // one) and check, so that packets go straight to the device queues.
    TrafficControlHelper tch;
    for (uint32_t i = 0; i < allDevices.GetN(); ++i)
    {
        Ptr<NetDevice> dev = allDevices.Get(i);
        Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
        if (tc && tc->GetRootQueueDiscOnDevice(dev))
        {
            tch.Uninstall(dev);
        }
        NS_ABORT_MSG_IF(tc && tc->GetRootQueueDiscOnDevice(dev), "queue disc left on a device");
    }

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // --- Random loss on the data direction of the bottleneck ---------------------------------
    // A receive error model drops a packet as the device receives it. At R1's access devices
    // (entry) only data packets arrive, and a dropped one never reaches the bottleneck queue, as
    // in ccsim; one model per access device, each with its own random stream. At R2's bottleneck
    // device (exit) the packet has already waited and been serialised.
    if (opt.loss > 0.0)
    {
        NetDeviceContainer lossy = opt.lossAtEntry ? r1AccessDevs : NetDeviceContainer(bnRx);
        for (uint32_t i = 0; i < lossy.GetN(); ++i)
        {
            Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
            em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
            em->SetRate(opt.loss);
            Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(lossy.Get(i));
            dev->SetReceiveErrorModel(em);
            dev->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&OnRandomDrop));
        }
    }

    // --- Measurement hooks -------------------------------------------------------------------
    Ptr<Queue<Packet>> bnQueue = bnTx->GetQueue();
    bnQueue->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnEnqueue));
    bnQueue->TraceConnectWithoutContext("Dequeue", MakeCallback(&OnDequeue));
    bnQueue->TraceConnectWithoutContext("Drop", MakeCallback(&OnQueueDrop));

    // --- Applications: one bulk transfer per flow --------------------------------------------
    const uint16_t port = 50000;
    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < opt.flows; ++i)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(receivers.Get(i));
        sinkApp.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sinkApp.Get(0)));

        BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(receiverAddr[i], port));
        source.SetAttribute("MaxBytes", UintegerValue(0)); // unlimited
        // Application write size only; TCP still cuts 1460-byte segments. Large writes keep the
        // number of Packet objects parked in the send buffer small.
        source.SetAttribute("SendSize", UintegerValue(64 * 1024));
        ApplicationContainer srcApp = source.Install(senders.Get(i));
        Time start = Seconds(opt.startSpread * i / opt.flows);
        srcApp.Start(start);
        Simulator::Schedule(start + NanoSeconds(1),
                            &HookSenderTraces,
                            DynamicCast<BulkSendApplication>(srcApp.Get(0)));
    }

    // --- Run ---------------------------------------------------------------------------------
    Simulator::Stop(Seconds(opt.duration));
    const auto runStart = std::chrono::steady_clock::now();
    Simulator::Run();
    const auto runEnd = std::chrono::steady_clock::now();

    // --- Results -----------------------------------------------------------------------------
    const double capacityBps = DataRate(opt.rate).GetBitRate();
    uint64_t rxBytes = 0;
    double sumX = 0.0;
    double sumX2 = 0.0;
    std::ostringstream perFlow;
    perFlow.precision(10);
    for (uint32_t i = 0; i < opt.flows; ++i)
    {
        uint64_t b = sinks[i]->GetTotalRx(); // unique in-order bytes delivered to the application
        rxBytes += b;
        double g = 8.0 * b / opt.duration;
        sumX += g;
        sumX2 += g * g;
        perFlow << (i ? "," : "") << g;
    }
    const double goodputBps = 8.0 * rxBytes / opt.duration;
    const double jain = sumX2 > 0 ? sumX * sumX / (opt.flows * sumX2) : 0.0;
    // Packets offered to the bottleneck: with loss at entry, the randomly dropped ones count too
    // (as ccsim counts arrivals before its random-loss draw).
    const uint64_t arrivals =
        g_bn.enqueued + g_bn.queueDrops + (opt.lossAtEntry ? g_bn.randomDrops : 0);
    const uint64_t randomBase = opt.lossAtEntry ? arrivals : g_bn.dequeued;
    const double runWall = std::chrono::duration<double>(runEnd - runStart).count();
    const double totalWall = std::chrono::duration<double>(runEnd - wallStart).count();

    std::ostringstream js;
    js.precision(10);
    js << "{"
       << "\"simulator\":\"ns-3\",\"ns3_version\":\"" << CCSIM_NS3_VERSION << "\""
       << ",\"flows\":" << opt.flows << ",\"rate_bps\":" << capacityBps << ",\"delay\":\""
       << opt.delay << "\",\"queue_pkts\":" << opt.queue << ",\"loss\":" << opt.loss
       << ",\"loss_at\":\"" << (opt.lossAtEntry ? "entry" : "exit") << "\""
       << ",\"ss_boundary\":\"" << (opt.ssInclusive ? "le" : "lt") << "\""
       << ",\"ssthresh_from\":\"" << (opt.ssthreshFromFlight ? "flight" : "pipe") << "\""
       << ",\"recovery_exit\":\"" << (opt.exitToFlight ? "flight" : "ssthresh") << "\""
       << ",\"seed\":" << opt.seed << ",\"duration_s\":" << opt.duration
       // goodput: bytes received by the sink applications over [0, duration]
       << ",\"goodput_bps\":" << goodputBps
       << ",\"goodput_fraction\":" << goodputBps / capacityBps
       // utilisation: bytes serialised on the bottleneck (IP packet + 2-byte PPP header, including
       // retransmissions and, with --loss-at=exit, the packets lost after it) / (rate * duration)
       << ",\"utilisation\":" << 8.0 * g_bn.txBytes / (capacityBps * opt.duration)
       << ",\"utilisation_basis\":\"bottleneck tx bytes incl. PPP header / capacity\""
       // loss: (tail + random drops) / packets arriving at the bottleneck
       << ",\"loss_rate\":"
       << (arrivals ? double(g_bn.queueDrops + g_bn.randomDrops) / arrivals : 0.0)
       << ",\"queue_loss_rate\":" << (arrivals ? double(g_bn.queueDrops) / arrivals : 0.0)
       << ",\"random_loss_rate\":" << (randomBase ? double(g_bn.randomDrops) / randomBase : 0.0)
       << ",\"drops_queue\":" << g_bn.queueDrops << ",\"drops_random\":" << g_bn.randomDrops
       << ",\"qdelay_mean_ms\":"
       << (g_bn.dequeued ? 1e3 * g_bn.sojournSumS / g_bn.dequeued : 0.0)
       << ",\"qdelay_max_ms\":" << 1e3 * g_bn.sojournMaxS
       << ",\"bottleneck_pkts_arrived\":" << arrivals
       << ",\"bottleneck_pkts\":" << g_bn.dequeued
       << ",\"retransmissions\":" << g_retransmissions
       << ",\"fast_recoveries\":" << g_fastRecoveries << ",\"timeouts\":" << g_timeouts
       << ",\"jain_index\":" << jain << ",\"flow_goodput_bps\":[" << perFlow.str() << "]"
       << ",\"events\":" << Simulator::GetEventCount()
       << ",\"wall_s\":" << runWall << ",\"wall_total_s\":" << totalWall
       << ",\"bottleneck_pkts_per_wall_s\":" << (runWall > 0 ? g_bn.dequeued / runWall : 0.0)
       << "}";
    std::cout << js.str() << std::endl;

    Simulator::Destroy();
    return 0;
}
