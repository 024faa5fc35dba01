package main

import (
	"flag"
	"time"

	"k8s.io/klog/v2"
)

// flagSetOfKlog holds klog's flags (--v among them, which the chart sets).
func flagSetOfKlog() *flag.FlagSet {
	set := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(set)
	return set
}

func mustDuration(text string) time.Duration {
	d, err := time.ParseDuration(text)
	if err != nil {
		panic(err)
	}
	return d
}
