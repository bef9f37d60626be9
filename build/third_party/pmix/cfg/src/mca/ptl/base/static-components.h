/* src/mca/ptl/base/static-components.h: the ptl components built into lamkit
 * (build/third_party/pmix). */
extern const pmix_mca_base_component_t pmix_mca_ptl_client_component;
extern const pmix_mca_base_component_t pmix_mca_ptl_server_component;
extern const pmix_mca_base_component_t pmix_mca_ptl_tool_component;
const pmix_mca_base_component_t *pmix_mca_ptl_base_static_components[] = {
    &pmix_mca_ptl_client_component, &pmix_mca_ptl_server_component, &pmix_mca_ptl_tool_component,
    NULL};
