// Package s3server owns the S3-compatible object store that weir's tests
// list and download from: gofakes3 with its in-memory backend, served over
// HTTP(S) on 127.0.0.1 and stopped when the test ends.
//
// gofakes3 speaks the S3 REST API as minio-go and the AWS SDKs expect it
// (path-style buckets, ListObjectsV2, ETags, XML errors), so weir's bucket
// client meets real wire traffic rather than a Go interface stub.
//
// # Authentication
//
// gofakes3 accepts every request and checks no signature. When
// Options.AccessKey or Options.Keys is set, this package puts its own verifier in front of
// it: every request must carry an "Authorization: AWS4-HMAC-SHA256 …"
// header whose Signature is the AWS Signature Version 4 of the request
// (method, path, query, the signed headers, the X-Amz-Content-Sha256 value)
// under the secret key of its access key id (Options.AccessKey's, or what
// Options.Keys answers: an STS fake's issued credentials). Temporary
// credentials must come with their session token in a signed
// X-Amz-Security-Token header, else InvalidToken. AccessKeys lists the
// access keys of the requests accepted, so a test proves which
// credentials reached S3. Failures are answered the way S3 answers
// them, with status 403 and the codes minio-go and the AWS SDKs know:
// AccessDenied (no or unsupported authorization), InvalidAccessKeyId
// (another access key), SignatureDoesNotMatch (wrong secret key or altered
// request). HEAD responses carry no body, like S3's.
//
// What the verifier does not check, because no weir test needs it: the
// request body against X-Amz-Content-Sha256, the per-chunk signatures of
// aws-chunked (streaming) uploads (only their seed signature in the header
// is verified), presigned URLs (query-string signatures are treated as
// anonymous and refused), Signature Version 2, and whether
// the region in the credential scope is the bucket's. Request times are
// checked by gofakes3 itself (15 minutes of skew).
//
// # Test helpers
//
// CreateBucket, PutObject and DeleteObject write to the backend directly,
// not over HTTP, so tests can plant keys no well-behaved client would send
// ("../evil.yaml", "/etc/x") and so they do not show up in Requests.
// Requests counts what clients asked over HTTP, by kind: a test that wants
// to prove nothing was downloaded compares Counts.ObjectGets before and
// after.
//
// Usage:
//
//	srv := s3server.New(t, s3server.Options{AccessKey: "weir", SecretKey: "s3cret"})
//	srv.CreateBucket(t, "manifests")
//	etag := srv.PutObject(t, "manifests", "deploy/app.yaml", "kind: ConfigMap\n")
//	// Point a Bucket at endpoint srv.Endpoint() with insecure: true and a
//	// Secret holding accesskey/secretkey.
package s3server
