// cdicheck SPEC: loads a CDI spec with the reference library
// (container-device-interface, as Debian ships it), which runs the checks
// the JSON schema leaves to it (version, vendor/class kind, device names,
// edits), then applies each device to an OCI spec whose image sets
// LD_PRELOAD=/image.so and prints the environment the container would get,
// one "kind=name: VAR=VAL|VAR=VAL..." line per device.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/container-orchestrated-devices/container-device-interface/pkg/cdi"
	oci "github.com/opencontainers/runtime-spec/specs-go"
)

func main() {
	spec, err := cdi.ReadSpec(os.Args[1], 0)
	if err != nil {
		fmt.Println("invalid:", err)
		os.Exit(1)
	}
	for _, d := range spec.Devices {
		o := &oci.Spec{Process: &oci.Process{
			Env: []string{"PATH=/bin", "LD_PRELOAD=/image.so"}}}
		dev := spec.GetDevice(d.Name)
		if err := spec.ApplyEdits(o); err != nil {
			fmt.Println("apply:", err)
			os.Exit(1)
		}
		if err := dev.ApplyEdits(o); err != nil {
			fmt.Println("apply:", err)
			os.Exit(1)
		}
		mounts := []string{}
		for _, m := range o.Mounts {
			mounts = append(mounts, m.Source+">"+m.Destination+"("+
				strings.Join(m.Options, ",")+")")
		}
		fmt.Printf("%s: %s mounts: %s\n", dev.GetQualifiedName(),
			strings.Join(o.Process.Env, "|"), strings.Join(mounts, " "))
	}
}
