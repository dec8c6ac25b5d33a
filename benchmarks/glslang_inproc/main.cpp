// Times glslang's library compiling one GLSL compute shader to SPIR-V, in one process: the first compile
// and then `repeat` more. Built and run by benchmarks/compile_bench.py (nothing of glslang is committed):
//     g++ -O2 -std=c++17 main.cpp -I<glslang prefix>/include -L<glslang prefix>/lib -lglslang ... -o inproc
//     ./inproc shader.comp 20      -> one line per compile: "<microseconds> <SPIR-V words>"
#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static bool compile(const std::string& text, std::vector<unsigned int>& spirv) {
    glslang::TShader shader(EShLangCompute);
    const char* source = text.c_str();
    shader.setStrings(&source, 1);
    shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
    shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_3);
    shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_6);
    const auto messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);
    if (!shader.parse(GetDefaultResources(), 100, false, messages)) {
        std::fprintf(stderr, "%s\n", shader.getInfoLog());
        return false;
    }
    glslang::TProgram program;
    program.addShader(&shader);
    if (!program.link(messages)) {
        std::fprintf(stderr, "%s\n", program.getInfoLog());
        return false;
    }
    spirv.clear();
    glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), spirv);
    return true;
}

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s SHADER.comp REPEAT\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    std::stringstream text;
    text << in.rdbuf();
    const int repeat = std::atoi(argv[2]);
    glslang::InitializeProcess();
    std::vector<unsigned int> spirv;
    for (int i = 0; i <= repeat; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        if (!compile(text.str(), spirv)) return 1;
        const auto t1 = std::chrono::steady_clock::now();
        std::printf("%.1f %zu\n", std::chrono::duration<double, std::micro>(t1 - t0).count(), spirv.size());
    }
    glslang::FinalizeProcess();
    return 0;
}
