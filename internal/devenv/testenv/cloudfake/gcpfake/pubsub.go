package gcpfake

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/reqlog"
)

// Publish is one Publish call PubSub answered or refused.
type Publish struct {
	// Topic is the request's topic, projects/P/topics/T.
	Topic string
	// Bearer is the identity the call's access token stands for (what
	// Accept was given), empty for a token it does not know.
	Bearer string
	// Messages are the request's messages: data (decoded from the
	// wire's base64 by gRPC) and attributes.
	Messages []Message
	// Code is the gRPC status answered.
	Code codes.Code
}

// Message is a published message.
type Message struct {
	Data       []byte
	Attributes map[string]string
}

// PubSub is Google Cloud Pub/Sub's publisher API (google.pubsub.v1
// Publisher.Publish, the RPC behind REST's
// POST /v1/projects/P/topics/T:publish) over TLS on 127.0.0.1, as the Go
// client library calls it. A call needs an access token Accept was given
// (else UNAUTHENTICATED, as Google answers a missing or unknown token)
// and a topic AddTopic made (else NOT_FOUND); a token accepted for
// other topics only is PERMISSION_DENIED.
type PubSub struct {
	pb.UnimplementedPublisherServer

	// Addr is host:port, the client's endpoint.
	Addr string
	// tls trusts the fake's certificate.
	tls *tls.Config

	mu       sync.Mutex
	topics   map[string]bool
	accepted map[string]acceptance // access token → who it stands for
	ids      int
	log      reqlog.Log[Publish]
}

type acceptance struct {
	identity string
	topics   []string // empty: every topic
}

// StartPubSub serves the publisher until the test ends.
func StartPubSub(t testing.TB) *PubSub {
	t.Helper()
	ts := httptest.NewTLSServer(http.NotFoundHandler()) // for its 127.0.0.1 certificate
	cert, roots := ts.TLS.Certificates[0], ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	ts.Close()
	p := &PubSub{topics: map[string]bool{}, accepted: map[string]acceptance{},
		tls: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
	gs := grpc.NewServer(grpc.Creds(credentials.NewServerTLSFromCert(&cert)))
	pb.RegisterPublisherServer(gs, p)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	p.Addr = lis.Addr().String()
	return p
}

// ClientOptions point Google's Pub/Sub client at the fake and trust its
// certificate; credentials are the caller's.
func (p *PubSub) ClientOptions() []option.ClientOption {
	return []option.ClientOption{option.WithEndpoint(p.Addr),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(credentials.NewTLS(p.tls.Clone())))}
}

// AddTopic makes projects/project/topics/topic.
func (p *PubSub) AddTopic(project, topic string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.topics["projects/"+project+"/topics/"+topic] = true
}

// Accept makes accessToken valid, standing for identity (a Google
// service account's email, or a federated principal), on topics (all
// when none are named).
func (p *PubSub) Accept(accessToken, identity string, topics ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.accepted[accessToken] = acceptance{identity: identity, topics: topics}
}

// Publishes returns the calls answered so far, in order.
func (p *PubSub) Publishes() []Publish { return p.log.All() }

// Publish implements the RPC.
func (p *PubSub) Publish(ctx context.Context, req *pb.PublishRequest) (*pb.PublishResponse, error) {
	rec := Publish{Topic: req.GetTopic()}
	for _, m := range req.GetMessages() {
		rec.Messages = append(rec.Messages, Message{Data: m.GetData(), Attributes: m.GetAttributes()})
	}
	resp, err := p.publish(ctx, req, &rec)
	rec.Code = status.Code(err)
	p.log.Add(rec)
	return resp, err
}

func (p *PubSub) publish(ctx context.Context, req *pb.PublishRequest, rec *Publish) (*pb.PublishResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	var token string
	if a := md.Get("authorization"); len(a) == 1 {
		token, _ = strings.CutPrefix(a[0], "Bearer ")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	who, known := p.accepted[token]
	if !known {
		return nil, status.Error(codes.Unauthenticated, "Request had invalid authentication credentials. "+
			"Expected OAuth 2 access token, login cookie or other valid authentication credential.")
	}
	rec.Bearer = who.identity
	if !p.topics[req.GetTopic()] {
		return nil, status.Error(codes.NotFound, "Resource not found (resource="+lastSegment(req.GetTopic())+").")
	}
	if len(who.topics) > 0 && !slices.Contains(who.topics, req.GetTopic()) {
		return nil, status.Error(codes.PermissionDenied, "User not authorized to perform this action.")
	}
	if len(req.GetMessages()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "The value for message_count is too small. You passed 0 in the request, but the minimum value is 1.")
	}
	out := &pb.PublishResponse{}
	for range req.GetMessages() {
		p.ids++
		out.MessageIds = append(out.MessageIds, fmt.Sprint(p.ids))
	}
	return out, nil
}

func lastSegment(name string) string { return name[strings.LastIndex(name, "/")+1:] }
