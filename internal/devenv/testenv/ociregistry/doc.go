// Package ociregistry owns the OCI registry that weir's tests push to and
// pull from: distribution's registry application with in-memory storage,
// served on 127.0.0.1 and stopped when the test ends.
//
// It runs the real registry rather than a stub so that weir's OCI client
// meets the distribution API (uploads, digests, challenges) as production
// registries serve it. Basic auth, when asked for, is the registry's own
// htpasswd access controller: anonymous and wrong credentials get the
// registry's 401 with a "WWW-Authenticate: Basic" challenge, exactly as a
// docker/distribution deployment answers.
//
// Usage:
//
//	reg := ociregistry.New(t, ociregistry.Options{Username: "user", Password: "pass"})
//	digest := reg.PushArtifact(t, "org/manifests", "v1.0.0", ociregistry.Artifact{
//		Files:    map[string]string{"app.yaml": "kind: ConfigMap\n"},
//		Source:   "https://github.com/org/app",
//		Revision: "main@sha1:0123abcd",
//	})
//	// Point an OCIRepository at "oci://" + reg.Host() + "/org/manifests".
package ociregistry
