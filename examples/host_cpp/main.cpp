// A plain-Vulkan C++ host for kernels compiled ahead of time by coopdsl.
//
// Everything about the kernels comes from headers written by
//     coopdsl emit FILE.py --format c -o NAME.h
// (the SPIR-V words, descriptor bindings, push-constant and specialization
// layouts, workgroup size, and the device extensions and features to
// enable). No Python and no coopdsl are needed at run time.
//
//     coopdsl_host saxpy [N]        y = alpha * x + y on f32 (any Vulkan 1.3 device, lavapipe too)
//     coopdsl_host gemm [M N K]     f16 x f16 -> f32 cooperative-matrix GEMM, checked on the CPU
//
// COOPDSL_DEVICE=<index> picks a physical device (unset or "gpu": the first one
// offering everything the kernel needs). Exit status: 0 results match,
// 1 a Vulkan error or a wrong result, 2 bad usage.

#include <vulkan/vulkan.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm.h"   // coopdsl emit examples/gemm_khr.py --format c -o gemm.h
#include "saxpy.h"  // coopdsl emit examples/host_cpp/kernels.py --kernel saxpy --format c -o saxpy.h

// Vulkan headers older than 1.3.255 (Debian 12 ships 1.3.239) lack VK_KHR_cooperative_matrix.
#ifndef VK_KHR_cooperative_matrix
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR ((VkStructureType)1000506000)
typedef struct VkPhysicalDeviceCooperativeMatrixFeaturesKHR {
    VkStructureType sType;
    void *pNext;
    VkBool32 cooperativeMatrix;
    VkBool32 cooperativeMatrixRobustBufferAccess;
} VkPhysicalDeviceCooperativeMatrixFeaturesKHR;
#endif

namespace {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void check(VkResult r, const char *what) {
    if (r != VK_SUCCESS) throw Error(std::string(what) + " failed with VkResult " + std::to_string(r));
}

// The feature structs a coopdsl kernel may need, chained for vkGetPhysicalDeviceFeatures2 / vkCreateDevice.
struct Features {
    VkPhysicalDeviceFeatures2 core{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR coopmat{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};

    explicit Features(bool with_coopmat) {
        core.pNext = &v11;
        v11.pNext = &v12;
        v12.pNext = &v13;
        v13.pNext = with_coopmat ? &coopmat : nullptr;
    }
    Features(const Features &) = delete;
    Features &operator=(const Features &) = delete;

    // The feature boolean a header names (coopdsl/runtime/features.py spells them as Vulkan does).
    VkBool32 *find(const std::string &name) {
        struct Entry { const char *name; VkBool32 *flag; };
        const Entry table[] = {
            {"shaderFloat64", &core.features.shaderFloat64},
            {"shaderInt16", &core.features.shaderInt16},
            {"shaderInt64", &core.features.shaderInt64},
            {"storageBuffer16BitAccess", &v11.storageBuffer16BitAccess},
            {"uniformAndStorageBuffer16BitAccess", &v11.uniformAndStorageBuffer16BitAccess},
            {"storagePushConstant16", &v11.storagePushConstant16},
            {"shaderFloat16", &v12.shaderFloat16},
            {"shaderInt8", &v12.shaderInt8},
            {"storageBuffer8BitAccess", &v12.storageBuffer8BitAccess},
            {"uniformAndStorageBuffer8BitAccess", &v12.uniformAndStorageBuffer8BitAccess},
            {"storagePushConstant8", &v12.storagePushConstant8},
            {"vulkanMemoryModel", &v12.vulkanMemoryModel},
            {"vulkanMemoryModelDeviceScope", &v12.vulkanMemoryModelDeviceScope},
            {"bufferDeviceAddress", &v12.bufferDeviceAddress},
            {"shaderBufferInt64Atomics", &v12.shaderBufferInt64Atomics},
            {"subgroupSizeControl", &v13.subgroupSizeControl},
            {"cooperativeMatrix", &coopmat.cooperativeMatrix},
        };
        for (const Entry &e : table)
            if (name == e.name) return e.flag;
        return nullptr;
    }
};

bool has_coopmat_extension(const coopdsl_kernel_info &k) {
    for (uint32_t i = 0; i < k.device_extension_count; ++i)
        if (std::strcmp(k.device_extensions[i], "VK_KHR_cooperative_matrix") == 0) return true;
    return false;
}

std::vector<std::string> device_extensions(VkPhysicalDevice pd) {
    uint32_t n = 0;
    check(vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr), "vkEnumerateDeviceExtensionProperties");
    std::vector<VkExtensionProperties> props(n);
    check(vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, props.data()), "vkEnumerateDeviceExtensionProperties");
    std::vector<std::string> names;
    for (const auto &p : props) names.emplace_back(p.extensionName);
    return names;
}

// Why `pd` cannot run kernel `k` (empty when it can): API version, extensions, features, subgroup operations.
std::string missing(VkPhysicalDevice pd, const coopdsl_kernel_info &k) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    std::string out;
    auto lack = [&out](const std::string &what) { out += (out.empty() ? " " : ", ") + what; };
    if (props.apiVersion < k.api_version) lack("Vulkan API of " + std::string(k.target_env));
    std::vector<std::string> exts = device_extensions(pd);
    bool coopmat = false;
    for (uint32_t i = 0; i < k.device_extension_count; ++i) {
        bool found = false;
        for (const auto &e : exts) found = found || e == k.device_extensions[i];
        if (!found) lack(std::string("extension ") + k.device_extensions[i]);
        coopmat = coopmat || (found && std::strcmp(k.device_extensions[i], "VK_KHR_cooperative_matrix") == 0);
    }
    Features f(coopmat);
    vkGetPhysicalDeviceFeatures2(pd, &f.core);
    for (uint32_t i = 0; i < k.feature_count; ++i) {
        VkBool32 *flag = f.find(k.features[i]);
        if (!flag) throw Error(std::string("this host does not know how to enable feature ") + k.features[i]);
        if (!*flag) lack(std::string("feature ") + k.features[i]);
    }
    VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sub};
    vkGetPhysicalDeviceProperties2(pd, &props2);
    if (k.subgroup_operations & ~sub.supportedOperations) lack("subgroup operations");
    return out;
}

struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void *data = nullptr;
    VkDeviceSize size = 0;
};

// One device able to run one kernel: instance, queue, command pool. Buffers are host-visible for brevity.
class Context {
public:
    explicit Context(const coopdsl_kernel_info &k) : kernel_(k) {
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.pApplicationName = "coopdsl_host";
        app.apiVersion = k.api_version;
        VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
        ici.pApplicationInfo = &app;
        check(vkCreateInstance(&ici, nullptr, &instance_), "vkCreateInstance (is a Vulkan driver installed?)");
        pick_device();
        create_device();
    }
    ~Context() {
        for (Buffer &b : buffers_) {
            vkDestroyBuffer(device_, b.buffer, nullptr);
            vkFreeMemory(device_, b.memory, nullptr);
        }
        if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
        if (device_) vkDestroyDevice(device_, nullptr);
        vkDestroyInstance(instance_, nullptr);
    }
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    Buffer &buffer(VkDeviceSize size) {
        Buffer b;
        b.size = size;
        VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bci.size = size;
        bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT;
        check(vkCreateBuffer(device_, &bci, nullptr, &b.buffer), "vkCreateBuffer");
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(device_, b.buffer, &req);
        VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mai.allocationSize = req.size;
        mai.memoryTypeIndex = memory_type(req.memoryTypeBits);
        check(vkAllocateMemory(device_, &mai, nullptr, &b.memory), "vkAllocateMemory");
        check(vkBindBufferMemory(device_, b.buffer, b.memory, 0), "vkBindBufferMemory");
        check(vkMapMemory(device_, b.memory, 0, size, 0, &b.data), "vkMapMemory");
        buffers_.push_back(b);
        return buffers_.back();
    }

    // Run the kernel once: one buffer per binding (in binding-table order), spec data, push data, grid.
    void run(const std::vector<Buffer *> &args, const void *spec, size_t spec_size, const void *push,
             const uint32_t grid[3]) {
        const coopdsl_kernel_info &k = kernel_;
        if (args.size() != k.binding_count) throw Error("wrong number of buffers for kernel " + std::string(k.name));
        std::vector<VkDescriptorSetLayoutBinding> binds;
        for (uint32_t i = 0; i < k.binding_count; ++i) {
            if (k.bindings[i].set != 0) throw Error("this host uses descriptor set 0 only");
            binds.push_back({k.bindings[i].binding, (VkDescriptorType)k.bindings[i].descriptor_type, 1,
                             VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
        }
        VkDescriptorSetLayoutCreateInfo dslci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        dslci.bindingCount = (uint32_t)binds.size();
        dslci.pBindings = binds.data();
        VkDescriptorSetLayout set_layout;
        check(vkCreateDescriptorSetLayout(device_, &dslci, nullptr, &set_layout), "vkCreateDescriptorSetLayout");
        VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, (k.push_constant_size + 3) / 4 * 4};
        VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        plci.setLayoutCount = 1;
        plci.pSetLayouts = &set_layout;
        plci.pushConstantRangeCount = k.push_constant_size ? 1 : 0;
        plci.pPushConstantRanges = &range;
        VkPipelineLayout layout;
        check(vkCreatePipelineLayout(device_, &plci, nullptr, &layout), "vkCreatePipelineLayout");
        VkPipeline pipeline = create_pipeline(layout, spec, spec_size);

        std::vector<VkDescriptorPoolSize> sizes;
        for (const auto &b : binds) sizes.push_back({b.descriptorType, 1});
        VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        dpci.maxSets = 1;
        dpci.poolSizeCount = (uint32_t)sizes.size();
        dpci.pPoolSizes = sizes.data();
        VkDescriptorPool dpool;
        check(vkCreateDescriptorPool(device_, &dpci, nullptr, &dpool), "vkCreateDescriptorPool");
        VkDescriptorSetAllocateInfo dsai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        dsai.descriptorPool = dpool;
        dsai.descriptorSetCount = 1;
        dsai.pSetLayouts = &set_layout;
        VkDescriptorSet set;
        check(vkAllocateDescriptorSets(device_, &dsai, &set), "vkAllocateDescriptorSets");
        std::vector<VkDescriptorBufferInfo> infos(args.size());
        std::vector<VkWriteDescriptorSet> writes(args.size());
        for (size_t i = 0; i < args.size(); ++i) {
            infos[i] = {args[i]->buffer, 0, VK_WHOLE_SIZE};
            writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
            writes[i].dstSet = set;
            writes[i].dstBinding = binds[i].binding;
            writes[i].descriptorCount = 1;
            writes[i].descriptorType = binds[i].descriptorType;
            writes[i].pBufferInfo = &infos[i];
        }
        vkUpdateDescriptorSets(device_, (uint32_t)writes.size(), writes.data(), 0, nullptr);
        dispatch(pipeline, layout, set, push, grid);
        vkDestroyDescriptorPool(device_, dpool, nullptr);
        vkDestroyPipeline(device_, pipeline, nullptr);
        vkDestroyPipelineLayout(device_, layout, nullptr);
        vkDestroyDescriptorSetLayout(device_, set_layout, nullptr);
    }

    std::string device_name() const {
        VkPhysicalDeviceProperties props;
        vkGetPhysicalDeviceProperties(physical_, &props);
        return props.deviceName;
    }

private:
    void pick_device() {
        uint32_t n = 0;
        check(vkEnumeratePhysicalDevices(instance_, &n, nullptr), "vkEnumeratePhysicalDevices");
        std::vector<VkPhysicalDevice> devices(n);
        check(vkEnumeratePhysicalDevices(instance_, &n, devices.data()), "vkEnumeratePhysicalDevices");
        const char *chosen = std::getenv("COOPDSL_DEVICE");
        if (chosen && (!*chosen || std::string(chosen) == "gpu")) chosen = nullptr;  // (as the Python runtime)
        std::string why;
        for (uint32_t i = 0; i < n; ++i) {
            if (chosen && std::to_string(i) != chosen) continue;
            std::string lacks = missing(devices[i], kernel_);
            if (lacks.empty()) {
                physical_ = devices[i];
                return;
            }
            VkPhysicalDeviceProperties props;
            vkGetPhysicalDeviceProperties(devices[i], &props);
            why += "\n  device " + std::to_string(i) + " (" + props.deviceName + ") lacks:" + lacks;
        }
        if (chosen && n && why.empty())  // the variable named no device (COOPDSL_DEVICE=cpu is Python's interpreter)
            why = ": COOPDSL_DEVICE=" + std::string(chosen) + " names none of the " + std::to_string(n) +
                  " devices (0 to " + std::to_string(n - 1) + "); unset it to take the first that runs the kernel";
        throw Error("no Vulkan device can run kernel " + std::string(kernel_.name) +
                    (n ? why : std::string(": no Vulkan devices found")));
    }

    void create_device() {
        uint32_t n = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, nullptr);
        std::vector<VkQueueFamilyProperties> fams(n);
        vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, fams.data());
        for (family_ = 0; family_ < n && !(fams[family_].queueFlags & VK_QUEUE_COMPUTE_BIT); ++family_) {}
        if (family_ == n) throw Error("the device has no compute queue");
        float priority = 1.0f;
        VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        qci.queueFamilyIndex = family_;
        qci.queueCount = 1;
        qci.pQueuePriorities = &priority;
        Features enable(has_coopmat_extension(kernel_));  // exactly the features the header lists
        for (uint32_t i = 0; i < kernel_.feature_count; ++i) *enable.find(kernel_.features[i]) = VK_TRUE;
        VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
        dci.pNext = &enable.core;
        dci.queueCreateInfoCount = 1;
        dci.pQueueCreateInfos = &qci;
        dci.enabledExtensionCount = kernel_.device_extension_count;
        dci.ppEnabledExtensionNames = kernel_.device_extensions;
        check(vkCreateDevice(physical_, &dci, nullptr, &device_), "vkCreateDevice");
        vkGetDeviceQueue(device_, family_, 0, &queue_);
        VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        cpci.queueFamilyIndex = family_;
        check(vkCreateCommandPool(device_, &cpci, nullptr, &pool_), "vkCreateCommandPool");
    }

    uint32_t memory_type(uint32_t bits) const {
        VkPhysicalDeviceMemoryProperties mp;
        vkGetPhysicalDeviceMemoryProperties(physical_, &mp);
        const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
            if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return i;
        throw Error("no host-visible coherent memory type");
    }

    // The compute pipeline, specialized with `spec` laid out as the header's spec map describes.
    VkPipeline create_pipeline(VkPipelineLayout layout, const void *spec, size_t spec_size) {
        const coopdsl_kernel_info &k = kernel_;
        VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        smci.codeSize = k.code_size;
        smci.pCode = k.code;
        VkShaderModule module;
        check(vkCreateShaderModule(device_, &smci, nullptr, &module), "vkCreateShaderModule");
        VkSpecializationInfo si{k.spec_constant_count, (const VkSpecializationMapEntry *)k.spec_map, spec_size, spec};
        VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        cpci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        cpci.stage.module = module;
        cpci.stage.pName = k.entry_point;
        cpci.stage.pSpecializationInfo = k.spec_constant_count ? &si : nullptr;
        // a kernel written for one subgroup size (@coopdsl.kernel(subgroup_size=N)) asks the driver for it
        VkPipelineShaderStageRequiredSubgroupSizeCreateInfo sgci{
            VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
        sgci.requiredSubgroupSize = k.required_subgroup_size;
        if (k.required_subgroup_size) cpci.stage.pNext = &sgci;
        cpci.layout = layout;
        VkPipeline pipeline;
        VkResult r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &cpci, nullptr, &pipeline);
        vkDestroyShaderModule(device_, module, nullptr);
        check(r, "vkCreateComputePipelines");
        return pipeline;
    }

    void dispatch(VkPipeline pipeline, VkPipelineLayout layout, VkDescriptorSet set, const void *push,
                  const uint32_t grid[3]) {
        VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        cbai.commandPool = pool_;
        cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        cbai.commandBufferCount = 1;
        VkCommandBuffer cb;
        check(vkAllocateCommandBuffers(device_, &cbai, &cb), "vkAllocateCommandBuffers");
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        check(vkBeginCommandBuffer(cb, &begin), "vkBeginCommandBuffer");
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
        if (kernel_.push_constant_size)
            vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, kernel_.push_constant_size, push);
        vkCmdDispatch(cb, grid[0], grid[1], grid[2]);
        VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_SHADER_WRITE_BIT,
                                VK_ACCESS_HOST_READ_BIT};
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host,
                             0, nullptr, 0, nullptr);
        check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
        VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence fence;
        check(vkCreateFence(device_, &fci, nullptr, &fence), "vkCreateFence");
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &cb;
        check(vkQueueSubmit(queue_, 1, &submit, fence), "vkQueueSubmit");
        check(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        vkDestroyFence(device_, fence, nullptr);
        vkFreeCommandBuffers(device_, pool_, 1, &cb);
    }

    const coopdsl_kernel_info &kernel_;
    VkInstance instance_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    uint32_t family_ = 0;
    std::deque<Buffer> buffers_;  // a deque keeps the Buffer references handed out valid
};

// float -> IEEE half bits, round to nearest even (normal and subnormal halves; inputs here are small).
uint16_t to_half(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xFFu, man = x & 0x7FFFFFu;
    if (exp == 0xFF) return (uint16_t)(sign | 0x7C00u | (man ? 0x200u : 0u));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7C00u);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e), half = man >> shift, rest = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1))) ++half;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (man >> 13), rest = man & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) ++half;
    return (uint16_t)(sign | half);
}

int run_saxpy(uint32_t n) {
    Context ctx(saxpy_info);
    Buffer &x = ctx.buffer(n * sizeof(float)), &y = ctx.buffer(n * sizeof(float));
    float *xs = (float *)x.data, *ys = (float *)y.data;
    for (uint32_t i = 0; i < n; ++i) {
        xs[i] = 0.5f * (float)i;
        ys[i] = 1.0f - (float)i;
    }
    saxpy_spec spec = saxpy_spec_defaults;  // workgroup size WG: a specialization constant
    spec.WG = 128;
    saxpy_push push = {n, 2.0f};
    const uint32_t grid[3] = {(n + spec.WG - 1) / spec.WG, 1, 1};
    ctx.run({&x, &y}, &spec, sizeof spec, &push, grid);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (ys[i] != 2.0f * 0.5f * (float)i + 1.0f - (float)i) ++bad;
    std::printf("saxpy on %s: n=%u, workgroup %u (spec id %u): %s\n", ctx.device_name().c_str(), n, spec.WG,
                SAXPY_SPEC_WG_ID, bad ? "MISMATCH" : "ok");
    if (bad) std::fprintf(stderr, "%u of %u results differ from alpha * x + y\n", bad, n);
    return bad ? 1 : 0;
}

int run_gemm(uint32_t m, uint32_t n, uint32_t k) {
    if (m % 16 || n % 16 || k % 16) throw std::invalid_argument("gemm: M, N and K must be multiples of 16");
    Context ctx(gemm_info);
    Buffer &a = ctx.buffer((VkDeviceSize)m * k * 2), &b = ctx.buffer((VkDeviceSize)k * n * 2);
    Buffer &c = ctx.buffer((VkDeviceSize)m * n * 4);
    // quarter-integers in [-2, 2]: exact in f16, and every partial sum is exact in f32
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> q(-8, 8);
    std::vector<float> fa((size_t)m * k), fb((size_t)k * n);
    for (size_t i = 0; i < fa.size(); ++i) ((uint16_t *)a.data)[i] = to_half(fa[i] = 0.25f * (float)q(rng));
    for (size_t i = 0; i < fb.size(); ++i) ((uint16_t *)b.data)[i] = to_half(fb[i] = 0.25f * (float)q(rng));
    std::memset(c.data, 0, c.size);
    gemm_spec spec = gemm_spec_defaults;
    spec.M = m;
    spec.N = n;
    spec.K = k;
    const uint32_t grid[3] = {n / 16, m / 16, 1};
    ctx.run({&a, &b, &c}, &spec, sizeof spec, nullptr, grid);
    const float *cs = (const float *)c.data;
    double worst = 0;
    for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = 0; j < n; ++j) {
            double ref = 0;
            for (uint32_t l = 0; l < k; ++l) ref += (double)fa[(size_t)i * k + l] * fb[(size_t)l * n + j];
            worst = std::fmax(worst, std::fabs(ref - cs[(size_t)i * n + j]));
        }
    bool ok = worst <= 1e-3;
    std::printf("gemm on %s: %ux%ux%u f16 -> f32 (cooperative matrices), max |C - A*B| = %g: %s\n",
                ctx.device_name().c_str(), m, n, k, worst, ok ? "ok" : "MISMATCH");
    return ok ? 0 : 1;
}

uint32_t arg(int argc, char **argv, int i, uint32_t fallback) {
    if (i >= argc) return fallback;
    char *end = nullptr;
    unsigned long v = std::strtoul(argv[i], &end, 10);
    if (!*argv[i] || *end || v == 0 || v > 1u << 20) throw std::invalid_argument(std::string("bad size ") + argv[i]);
    return (uint32_t)v;
}

}  // namespace

int main(int argc, char **argv) {
    std::string which = argc > 1 ? argv[1] : "";
    try {
        if (which == "saxpy" && argc <= 3) return run_saxpy(arg(argc, argv, 2, 10000));
        if (which == "gemm" && (argc == 2 || argc == 5))
            return run_gemm(arg(argc, argv, 2, 256), arg(argc, argv, 3, 256), arg(argc, argv, 4, 256));
    } catch (const std::invalid_argument &e) {
        std::fprintf(stderr, "coopdsl_host: %s\n", e.what());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "coopdsl_host: %s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "usage: coopdsl_host saxpy [N] | coopdsl_host gemm [M N K]\n");
    return 2;
}
