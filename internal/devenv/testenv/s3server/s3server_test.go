package s3server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/weir-gitops/weir/internal/devenv/testenv/s3server"
)

func newClient(t *testing.T, srv *s3server.Server, access, secret string) *minio.Client {
	t.Helper()
	opts := &minio.Options{Region: "us-east-1", MaxRetries: 1}
	if access != "" {
		opts.Creds = credentials.NewStaticV4(access, secret, "")
	}
	if ca := srv.CAPEM(); ca != nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		opts.Transport, opts.Secure = tr, true
	}
	c, err := minio.New(srv.Endpoint(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRoundTripWithMinio(t *testing.T) {
	for _, tls := range []bool{false, true} {
		name := "http"
		if tls {
			name = "https"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			srv := s3server.New(t, s3server.Options{AccessKey: "weir", SecretKey: "s3cret", TLS: tls})
			srv.CreateBucket(t, "manifests")
			c := newClient(t, srv, "weir", "s3cret")

			// Over the wire, including a key whose path needs encoding and a
			// streaming-signed upload.
			keys := map[string]string{"deploy/app.yaml": "kind: ConfigMap\n", "dir/with space+plus=é.yaml": "a: 1\n"}
			for k, v := range keys {
				if _, err := c.PutObject(ctx, "manifests", k, strings.NewReader(v), int64(len(v)), minio.PutObjectOptions{}); err != nil {
					t.Fatalf("put %q: %v", k, err)
				}
			}
			etag := srv.PutObject(t, "manifests", "direct.yaml", "b: 2\n")
			keys["direct.yaml"] = "b: 2\n"

			got := map[string]string{}
			for obj := range c.ListObjects(ctx, "manifests", minio.ListObjectsOptions{Recursive: true}) {
				if obj.Err != nil {
					t.Fatal(obj.Err)
				}
				got[obj.Key] = obj.ETag
			}
			if got["direct.yaml"] != etag {
				t.Errorf("listed etag %q, PutObject returned %q", got["direct.yaml"], etag)
			}
			listed := sortedKeys(got)
			if diff := cmp.Diff(sortedKeys(keys), listed); diff != "" {
				t.Errorf("listing (-want +got):\n%s", diff)
			}
			for k, want := range keys {
				obj, err := c.GetObject(ctx, "manifests", k, minio.GetObjectOptions{})
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(obj)
				obj.Close()
				if err != nil || string(b) != want {
					t.Errorf("get %q = %q, %v", k, b, err)
				}
			}

			before := srv.Requests()
			srv.DeleteObject(t, "manifests", "direct.yaml")
			if _, err := c.StatObject(ctx, "manifests", "direct.yaml", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
				t.Errorf("stat of a deleted object: %v", err)
			}
			after := srv.Requests()
			if after.ObjectHeads != before.ObjectHeads+1 || after.ObjectGets != before.ObjectGets || after.Total != before.Total+1 {
				t.Errorf("counts went from %+v to %+v for one HEAD", before, after)
			}
			if after.Denied != 0 {
				t.Errorf("%d signed requests were refused", after.Denied)
			}
		})
	}
}

func TestAuthentication(t *testing.T) {
	ctx := context.Background()
	srv := s3server.New(t, s3server.Options{AccessKey: "weir", SecretKey: "s3cret"})
	srv.CreateBucket(t, "private")
	srv.PutObject(t, "private", "a.yaml", "a: 1\n")

	tests := []struct {
		name, access, secret, code string
	}{
		{"right keys", "weir", "s3cret", ""},
		{"wrong secret key", "weir", "guess", "SignatureDoesNotMatch"},
		{"unknown access key", "someone", "s3cret", "InvalidAccessKeyId"},
		{"anonymous", "", "", "AccessDenied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, srv, tt.access, tt.secret)
			obj, err := c.GetObject(ctx, "private", "a.yaml", minio.GetObjectOptions{})
			if err == nil {
				_, err = io.ReadAll(obj)
				obj.Close()
			}
			if got := minio.ToErrorResponse(err).Code; got != tt.code {
				t.Errorf("GET: error code %q (%v), want %q", got, err, tt.code)
			}
			// HEAD gets the same verdict without a body.
			_, err = c.StatObject(ctx, "private", "a.yaml", minio.StatObjectOptions{})
			if (err == nil) != (tt.code == "") {
				t.Errorf("HEAD: %v", err)
			}
		})
	}
	if srv.Requests().Denied == 0 {
		t.Error("no request was counted as denied")
	}
}

func TestAnonymousServer(t *testing.T) {
	srv := s3server.New(t, s3server.Options{})
	srv.CreateBucket(t, "public")
	srv.PutObject(t, "public", "x", "y")
	c := newClient(t, srv, "", "")
	if _, err := c.StatObject(context.Background(), "public", "x", minio.StatObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
