# cumemguard-device-plugin, the kubelet device plugin: C++, because its
# protocol library is gRPC's libgrpc++ (Debian's, with protoc and
# grpc_cpp_plugin generating the code of the two .proto files); the core
# and the operator's views it shares with the launcher are C.  Built where
# configure finds them (--with-device-plugin makes them a requirement).
EXTRA_DIST += src/k8s/deviceplugin.proto src/k8s/podresources.proto
if HAVE_GRPC
bin_PROGRAMS += cumemguard-device-plugin
K8S_PB = src/k8s/deviceplugin.pb.cc src/k8s/deviceplugin.pb.h \
	src/k8s/deviceplugin.grpc.pb.cc src/k8s/deviceplugin.grpc.pb.h \
	src/k8s/podresources.pb.cc src/k8s/podresources.pb.h \
	src/k8s/podresources.grpc.pb.cc src/k8s/podresources.grpc.pb.h
cumemguard_device_plugin_SOURCES = \
	src/k8s/main.cc \
	src/k8s/flags.cc src/k8s/flags.h \
	src/k8s/gpus.cc src/k8s/gpus.h \
	src/k8s/labels.cc src/k8s/labels.h \
	src/k8s/plugin.cc src/k8s/plugin.h \
	src/k8s/respond.cc src/k8s/respond.h \
	src/k8s/specs.cc src/k8s/specs.h \
	src/k8s/units.cc src/k8s/units.h
nodist_cumemguard_device_plugin_SOURCES = $(K8S_PB)
BUILT_SOURCES += $(K8S_PB)
CLEANFILES += $(K8S_PB)
cumemguard_device_plugin_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/src \
	-I$(top_builddir)/src/k8s
cumemguard_device_plugin_CXXFLAGS = -std=c++17 -Wall -Wextra \
	-Wno-unused-parameter $(GRPCXX_CFLAGS)
cumemguard_device_plugin_LDADD = libcmg_ops.la libcmg_core.la $(GRPCXX_LIBS) \
	-ldl
# protoc writes the four files of a .proto at once, from the source tree.
src/k8s/%.pb.cc src/k8s/%.pb.h src/k8s/%.grpc.pb.cc src/k8s/%.grpc.pb.h: \
		$(srcdir)/src/k8s/%.proto
	@$(MKDIR_P) src/k8s
	$(AM_V_GEN)$(PROTOC) --proto_path=$(srcdir)/src/k8s --cpp_out=src/k8s \
	  --grpc_out=src/k8s --plugin=protoc-gen-grpc=$(GRPC_CPP_PLUGIN) $<
endif
