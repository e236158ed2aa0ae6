package decrypt

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BenchmarkDecrypt decrypts 100 whole Secrets, each encrypted with its own
// data key to one age recipient, as a build of a repository holding 100
// encrypted Secrets does. One op is the 100 decryptions.
func BenchmarkDecrypt(b *testing.B) {
	k := newAgeKey(b)
	d := mustNew(b, map[string][]byte{"k.agekey": []byte(k.identity)})
	objects := make([]*unstructured.Unstructured, 100)
	for i := range objects {
		plain := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s%d\n  namespace: apps\ntype: Opaque\nstringData:\n  username: app\n  password: p%d\ndata:\n  tls.crt: dGxzLWNlcnQ=\n", i, i)
		enc, err := EncryptYAML([]byte(plain), []string{k.recipient})
		if err != nil {
			b.Fatal(err)
		}
		objects[i] = object(b, enc)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, o := range objects {
			if _, err := d.DecryptObject(o); err != nil {
				b.Fatal(err)
			}
		}
	}
}
