module github.com/pulumi-fleet/tools/fleet-schedule

go 1.26

require github.com/reugn/go-quartz v0.15.2
