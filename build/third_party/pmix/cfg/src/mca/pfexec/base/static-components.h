/* src/mca/pfexec/base/static-components.h: the pfexec components built into lamkit
 * (build/third_party/pmix). */
extern const pmix_mca_base_component_t pmix_mca_pfexec_linux_component;
const pmix_mca_base_component_t *pmix_mca_pfexec_base_static_components[] = {
    &pmix_mca_pfexec_linux_component, NULL};
